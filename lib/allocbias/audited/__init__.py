"""What is audited: names, jobs and résumés, essays, the prompts that ask about them, and the public data sets
with their verified loaders. The lowest layer: it imports no other part of the library but :mod:`allocbias.checks`."""
