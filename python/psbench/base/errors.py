"""Errors the user can act on: the CLI prints them without a traceback."""


class UserError(Exception):
    """A problem with the arguments or the setup, with the fix in the message.

    exit_code 2 = bad argument (the argparse convention), 1 = setup problem such as a
    missing build.
    """

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code
