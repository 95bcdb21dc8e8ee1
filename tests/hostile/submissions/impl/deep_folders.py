def _folders_past_path_max():
    """At import, in the run's own folder, chain folders (by relative names, as mkdir with dir_fd
    allows) whose path passes PATH_MAX, named with a marker: the zygote's removal by path died
    after the run, quoting the path (red team, round 29)."""
    import os as _os

    names = ["LEAKED-" + "x" * 193] * 30
    fd = _os.open(".", _os.O_RDONLY | _os.O_DIRECTORY)
    for name in names:
        _os.mkdir(name, dir_fd=fd)
        deeper = _os.open(name, _os.O_RDONLY | _os.O_DIRECTORY, dir_fd=fd)
        _os.close(fd)
        fd = deeper
    _os.close(fd)


_folders_past_path_max()
