"""Hosts the roles of a run are placed on: emulated ones (network namespaces on this
machine, joined through a bridge by links psbench shapes) and, later, real machines over
SSH. Below run/ (which places roles on them) and above base/."""
