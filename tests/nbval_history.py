"""pytest plugin for ``make test``'s nbval step: execute every cell with IPython's history on, as papermill does.

nbval sends each cell with ``store_history=False``, so IPython's ``In`` stays empty and
:func:`allocbias.book.check_parameters` (which reads ``In`` to find the ``parameters`` cell and papermill's
injected one) would stop the chapter. With history on, the re-executed copy runs exactly as the book's run
did. Execution counts change, and nbval does not compare them. Load with ``-p tests.nbval_history``.
"""

from __future__ import annotations

from nbval.kernel import RunningKernel


def _execute_with_history(self: RunningKernel, cell_input: str, allow_stdin: bool | None = None) -> str:
    return self.kc.execute(cell_input, store_history=True, allow_stdin=allow_stdin, stop_on_error=False)


RunningKernel.execute_cell_input = _execute_with_history
