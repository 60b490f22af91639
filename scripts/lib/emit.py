"""How a benchmark script ends: its result lines printed, and written to
the --markdown file when one is given (the docs/results pages)."""


def emit(lines, markdown=None):
    """Prints `lines` as one text, and writes the same text to `markdown`."""
    text = "\n".join(lines) + "\n"
    print(text)
    if markdown:
        with open(markdown, "w") as f:
            f.write(text)
