"""Small Trio helpers the layers of the package share, each for a reason of its own.

* `parking`: `Parking`, a place where one task sleeps until another wakes it.
  It exists for speed: a request's answer, a transport's outbox and the
  server core's queue each wake exactly one known task, and parking it with
  `trio.lowlevel.wait_task_rescheduled` costs less than a `trio.Event` made
  per wait.
* `nursery`: what a failure in one of the package's nurseries means for the
  caller (`reraise`, `unexpected`, `first_cancelled`). It exists for
  correctness: no `ExceptionGroup` reaches a user, and the caller's own
  exception wins over a failure of a background task.

The package imports each helper from its own module; this one imports
nothing, so that a light importer (the demo server) loads only what it uses.
"""
