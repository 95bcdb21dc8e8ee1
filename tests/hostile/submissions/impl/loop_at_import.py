while True:  # the module never finishes importing
    pass
