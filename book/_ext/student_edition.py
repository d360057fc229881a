"""Sphinx extension for the student edition of the book: remove every exercise solution.

sphinx-exercise's own ``hide_solutions`` option drops ``{solution}`` directives but fails on the gated
``{solution-start}``/``{solution-end}`` form the chapters use (its end node is left without a writer). This
extension instead deletes the merged solution nodes before sphinx-exercise resolves their titles, so the
student edition shows the exercises and nothing of their solutions.
"""

from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_exercise.nodes import solution_end_node, solution_node, solution_start_node


class RemoveSolutions(SphinxPostTransform):
    """Delete every solution (plain or gated) from the document."""

    default_priority = 1  # before sphinx-exercise's post-transforms (5 and above)

    def run(self, **kwargs) -> None:
        for cls in (solution_node, solution_start_node, solution_end_node):
            for node in list(self.document.findall(cls)):
                node.parent.remove(node)


def setup(app):
    app.setup_extension("sphinx_exercise")
    app.add_post_transform(RemoveSolutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
