"""A call's arguments as the portable form takes them (``catalog.Param``): moved to
their position, given their name, or why that is not exact."""

from __future__ import annotations

from typing import List, Optional, Sequence, Union

import libcst as cst

from codemod.catalog import Param
from codemod.passes.runtime.tables import is_name


def mapped_arguments(
    args: Sequence[cst.Arg], params: Optional[Sequence[Param]]
) -> Union[Sequence[cst.Arg], str]:
    """The call's arguments as the portable form takes them (``params``: the CUDA
    function's parameters, see ``catalog.Param``), or why that is not exact."""
    if params is None:
        return args
    if any(a.star for a in args):
        return "arguments passed with * or ** cannot be checked against the target"
    values: List[Optional[cst.Arg]] = [None] * len(params)
    names = [p.name for p in params]
    for position, arg in enumerate(args):
        if arg.keyword is None:
            if position >= len(params):
                return "more arguments than the target takes"
            values[position] = arg
        elif (
            arg.keyword.value in names
            and values[names.index(arg.keyword.value)] is None
        ):
            values[names.index(arg.keyword.value)] = arg
        else:
            return f"`{arg.keyword.value}=` is not an argument the target takes"
    out: List[cst.Arg] = []
    keywords: List[cst.Arg] = []
    for index, (param, arg) in enumerate(zip(params, values)):
        if arg is None:
            continue
        if param.index_only and not (
            isinstance(arg.value, cst.Integer) or is_name(arg.value, "None")
        ):
            return (
                f"`{param.name}` must be an int index there, not a device or a string"
            )
        if param.default_only:
            if not is_name(arg.value, "False"):
                return f"`{param.name}=` is not honoured there"
            continue  # its default, said or not
        if param.keyword_only and arg.keyword is None:
            arg = arg.with_changes(
                keyword=cst.Name(param.name),
                equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""),
                    whitespace_after=cst.SimpleWhitespace(""),
                ),
            )
        if param.positional_only:
            if any(v is None for v in values[:index]):
                return (
                    f"`{param.name}` is positional there and an earlier one is missing"
                )
            out.append(arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT))
        else:
            keywords.append(arg)
    out += keywords
    last = len(out) - 1
    return [
        a.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == last else a
        for i, a in enumerate(out)
    ]
