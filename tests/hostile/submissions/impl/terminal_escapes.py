

# Every course test and the probes report this import error, so its text reaches the report: an
# escape sequence that clears the screen and prints a verdict of its own, a carriage return, a
# NUL (invalid in a JUnit file) and a lone surrogate (which cannot be written as UTF-8 at all).
raise RuntimeError("\x1b[2J\x1b[HChapter L4.3: PASS\x00\r\ud800")
