"""The error of the user's input (a leaf module: every layer raises it, the command-line entry points catch it)."""


class UserInputError(Exception):
    """An error in what the user gave (a path, a folder's content, an option): the CLI prints its message alone."""
