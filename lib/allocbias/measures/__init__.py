"""What is measured: bias metrics, selection and allocation gaps, validity, Local Law 144, HiringBloomberg, rankings,
agreement and intervals. Pure functions over arrays and tidy frames: no I/O of score tables, no model code."""
