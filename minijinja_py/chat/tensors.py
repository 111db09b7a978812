"""The drop-in's results as tensors, converted as transformers converts them: `"np"` (numpy;
a ragged batch as an object array of rows), `"pt"` (torch), int64 for an empty one; one
conversation's lists unbatched, and given their batch axis back when they become tensors."""

from __future__ import annotations

from itertools import chain
from typing import Any

__all__ = ["tensor", "to_tensors", "unbatch"]

_TENSORS = ("pt", "np", "mlx")


def unbatch(out: dict[str, Any]) -> dict[str, Any]:
    # Marked for to_tensors: one conversation's lists gain their batch axis back as tensors.
    return _Single({key: value[0] for key, value in out.items()})


class _Single(dict[str, Any]):
    """The values of one conversation, unbatched as transformers unbatches them (undone when
    they become tensors, which keep the batch axis)."""


def to_tensors(out: dict[str, Any], kind: Any) -> None:
    """Every value of `out` made a tensor of `kind`, in place."""
    single = isinstance(out, _Single)
    for key, value in list(out.items()):
        out[key] = tensor([value] if single else value, kind, key)


def tensor(value: Any, kind: Any, key: str) -> Any:
    """`value` (the lists of result key `key`) as a tensor of `kind`."""
    name = getattr(kind, "value", kind)
    if name not in _TENSORS:
        raise ValueError(f"{kind} is not a valid TensorType, please select one of {list(_TENSORS)}")
    if name == "mlx":
        raise ImportError(
            "Unable to convert output to MLX tensors format, minijinja_py does not make them."
        )
    if name == "pt":
        try:
            import torch  # type: ignore[import-not-found]
        except ImportError:
            raise ImportError(
                "Unable to convert output to PyTorch tensors format, PyTorch is not installed."
            ) from None
    try:
        import numpy as np
    except ImportError:
        raise ImportError(
            f"return_tensors={name!r} needs numpy: install it (pip install numpy)"
        ) from None
    try:
        if name == "pt":
            if _total(value) == 0:
                return torch.tensor(value, dtype=torch.int64)
            return torch.tensor(value)
        return _numpy(np, value)
    except Exception as error:
        raise ValueError(
            "Unable to create tensor, you should probably activate truncation and/or padding with "
            "'padding=True' 'truncation=True' to have batched tensors with the same length. "
            f"Perhaps your features (`{key}` in this case) have excessive nesting (inputs type "
            "`list` where type `int` is expected)."
        ) from error


def _numpy(np: Any, value: Any) -> Any:
    if value and isinstance(value[0], (list, tuple)):
        widths = {len(row) for row in value}
        if len(widths) > 1:
            # A ragged batch: an object array of int64 arrays, as transformers makes it.
            return np.asarray([np.asarray(row) for row in value], dtype=object)
        width = widths.pop()
        if width and type(value[0][0]) is int:
            # A padded batch of ids or masks (the drop-in's own lists of ints): read as one
            # run of ints, in about half the time np.asarray takes to infer the nesting and
            # the type of each item; the dtype is the one np.asarray gives a row of them.
            dtype = np.asarray(value[0][:1]).dtype
            try:
                # Masks (every item a byte's value): read as bytes, in C, twice as fast again.
                small = np.frombuffer(b"".join(map(bytes, value)), dtype=np.uint8)
                flat = small.astype(dtype)
            except (ValueError, TypeError):  # (an id past 255, met at once in a row of ids)
                flat = np.fromiter(
                    chain.from_iterable(value), dtype=dtype, count=len(value) * width
                )
            return flat.reshape(len(value), width)
    if _total(value) == 0:
        return np.asarray(value, dtype=np.int64)
    return np.asarray(value)


def _total(value: Any) -> int:
    if isinstance(value, (list, tuple)):
        return (
            sum(_total(item) for item in value)
            if value and isinstance(value[0], (list, tuple))
            else len(value)
        )
    return 1
