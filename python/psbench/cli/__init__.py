"""The command line: argument parsing (arg_parser), dispatch (main, commands) and one
module per command (cmd_*). Imports what a command needs only when it runs, so that
`psbench --help` stays fast.
"""
