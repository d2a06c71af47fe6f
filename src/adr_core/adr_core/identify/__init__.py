"""System identification of a Poppy Ergo Jr (or the stand-in): measure what the simulator must randomize.

An excitation (``excitation``: steps and sweeps of one joint at a time) is played on the arm through the deploy graph
(``identify_arm.launch.py``: the driver, pypot, signed messages) and logged (``log``); the same commands are replayed
in the env's simulated arm (``replay``) under a servo model whose numbers CMA-ES fits to the measured angles
(``fit``); the result is a randomization space centred on the estimates (``space``) and a report (``report``).
``adr-identify`` (package ``adr``) runs the whole path; deploy step logs can be identified from too.
Plain Python (PyBullet, numpy, cma): no ROS here. Import the submodules: ``excitation`` and ``log`` need only numpy
(the arm's computer runs them in the identifier node), ``fit`` needs ``cma``, ``report`` matplotlib.
"""
