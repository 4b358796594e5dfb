# man/: one page per tool.
