"""Process exit codes of the reference trainer, the contract with the Job's podFailurePolicy.

The numbers follow BSD ``sysexits.h`` (64 ``EX_USAGE``, 74 ``EX_IOERR``, 75 ``EX_TEMPFAIL``)
where one fits, so that they are distinct from the codes the shell and the container runtime
produce on their own (1 for an uncaught Python exception, 2 for an argparse error, 128+N for a
process killed by signal N: 137 for SIGKILL/OOM, 143 for an unhandled SIGTERM).

========  =====================  ===============================================================
code      name                   meaning / suggested podFailurePolicy action
========  =====================  ===============================================================
0         ``OK``                 training finished; ``final/model.pt`` is written.
64        ``USER_ERROR``         bad arguments, unusable data (missing or empty ``--data-dir``,
                                 unreadable image), an unsupported or unwritable checkpoint
                                 URI, missing pod identity env, a checkpoint made for a
                                 different model or global batch, a missing optional package
                                 that a chosen option needs. Retrying cannot help:
                                 ``action: FailJob``.
74        ``CHECKPOINT_FAILED``  a checkpoint could not be written (a background write failed,
                                 or the final or emergency one): the run stops at once rather
                                 than train on with nothing saved. Work since the newest
                                 loadable checkpoint is lost; a retry resumes from it. Usually a
                                 storage outage: no rule needed, it counts towards
                                 ``backoffLimit`` like 1.
75        ``PREEMPTED``          SIGTERM (node drain, spot/preemptible notice) was received;
                                 the current step was finished and a complete checkpoint of
                                 that step was written before exiting. Retrying resumes
                                 without lost work: ``action: Ignore`` (does not count
                                 against ``backoffLimit``).
1         ``UNEXPECTED_ERROR``   any other failure (a bug, a storage outage, a NCCL error):
                                 ``action: Count`` (retried up to ``backoffLimit``).
========  =====================  ===============================================================

Example Job snippet::

    podFailurePolicy:
      rules:
      - action: FailJob
        onExitCodes: {containerName: trainer, operator: In, values: [64]}
      - action: Ignore
        onExitCodes: {containerName: trainer, operator: In, values: [75]}
      - action: Ignore
        onPodConditions: [{type: DisruptionTarget}]

Under ``torchrun`` the launcher's own exit code hides the workers' codes, so the container
image starts ``python -m trainer.launch`` (a thin wrapper around ``torchrun``) which collects
every local worker's code and exits with the most severe one: ``USER_ERROR`` before any
other failure, before ``PREEMPTED``, before ``OK``.
"""

from __future__ import annotations

OK = 0
UNEXPECTED_ERROR = 1
USER_ERROR = 64
CHECKPOINT_FAILED = 74  # EX_IOERR
PREEMPTED = 75

#: exit codes after which a retry of the same pod spec can succeed and loses no work.
RETRYABLE = frozenset({PREEMPTED})
#: exit codes after which a retry cannot succeed.
NON_RETRYABLE = frozenset({USER_ERROR})

NAMES = {
    OK: "OK",
    UNEXPECTED_ERROR: "UNEXPECTED_ERROR",
    USER_ERROR: "USER_ERROR",
    CHECKPOINT_FAILED: "CHECKPOINT_FAILED",
    PREEMPTED: "PREEMPTED",
}


def severity(code: int) -> int:
    """Rank exit codes for combining several workers' codes (higher is more severe)."""
    if code == USER_ERROR:
        return 3
    if code == OK:
        return 0
    if code == PREEMPTED:
        return 1
    return 2


def combine(codes: list[int]) -> int:
    """The one exit code that stands for several processes' codes."""
    if not codes:
        return UNEXPECTED_ERROR
    return max(codes, key=severity)
