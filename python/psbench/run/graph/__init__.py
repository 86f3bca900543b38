"""Application graphs (docs/graphs.md): graph files, their validation, and the node
processes that run one."""
