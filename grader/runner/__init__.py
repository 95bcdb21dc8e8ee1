"""The warm runner: a zygote inside the sandbox forks one child per run; the driver feeds it.

``driver.WarmRunner`` is the trusted side; ``inside/`` is what runs in the sandbox.
"""
