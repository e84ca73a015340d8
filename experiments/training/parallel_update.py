"""The PPO update on two cores: a helper thread for the parts of the update that can run beside the
actor's passes, with results equal bit for bit to the one-thread update.

Actor and critic share no parameter, so :class:`~experiments.training.batched_ppo.BatchedPPO` runs
the critic's forward and backward passes in a helper thread beside the actor's, and so are the
actor's weight gradients (all but the first layer's): each is computed from its layer's output
gradient (:meth:`~experiments.training.batched_ppo.ActorCritic.logits_by_layer`) by a backward hook
as autograd reaches it (:func:`hook_weight_gradients`), with the ops autograd runs for ``linear``
(:func:`linear_weight_gradients`).  Every op still runs on one thread, so the weights and metrics
are those of the one-thread update whichever thread ran what (tests/test_batched_ppo.py); torch's
own intra-op threads would round sums differently and are left at one.

The learner decides, part by part, whether the helper may run it (``BatchedPPO.beside``): not
while a sampler process is playing on the second core (unless the machine has a core for each
sampler, the update and the helper), and never on a GPU learner (its kernels are asynchronous
already).  A part the helper does not take (:class:`Part`) runs in the update's own thread when
its result is needed.
"""
from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any, Callable, List, Optional, Tuple

import torch as th
from torch import nn


def linear_weight_gradients(grad: th.Tensor, inputs: th.Tensor, layer: nn.Linear, columns: Optional[th.Tensor]) -> None:
    """Set ``layer``'s weight and bias gradients from the gradient ``grad`` of its output on ``inputs``
    (only the rows ``columns`` of the layer when given) with the operations autograd uses for
    ``linear`` (``addmm``'s backward, then ``index``'s): the same values, bit for bit
    (tests/test_batched_ppo.py).  No graph is recorded (grad mode is per thread, and on in a helper)."""
    with th.no_grad():
        weight, bias = grad.t().mm(inputs), grad.sum(0)
        if columns is not None:
            weight = th.zeros_like(layer.weight).index_put_((columns,), weight, accumulate=True)
            bias = th.zeros_like(layer.bias).index_put_((columns,), bias, accumulate=True)
    layer.weight.grad, layer.bias.grad = weight, bias



def helper_thread() -> ThreadPoolExecutor:
    """The update's helper thread, running torch with the thread count of the thread that makes it.

    OpenMP keeps a thread count per thread: a new thread starts with the process default
    (``OMP_NUM_THREADS``, else every core), not what ``torch.set_num_threads`` set in the learner's
    thread, and keeps it until torch's first parallel loop in that thread.  A matrix product before
    then is split over the cores and rounds its sums differently (a one-row minibatch's critic pass,
    the helper's first job in an update, showed it in the ninth digit), so the thread sets its count
    before any job."""
    return ThreadPoolExecutor(1, thread_name_prefix="critic", initializer=th.set_num_threads,
                              initargs=(th.get_num_threads(),))


def usable_cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def hook_weight_gradients(layers: List[Tuple[Any, ...]], helper: Optional[ThreadPoolExecutor]) -> List[Future]:
    """Backward hooks on the outputs of :meth:`ActorCritic.logits_by_layer`'s ``layers`` that set each
    layer's weight gradients (:func:`linear_weight_gradients`) as the pass reaches it: in ``helper``
    (their futures, filled in as the hooks run, are returned) or, without one, in the backward pass
    itself.  The first layer's (a leaf output: the pass ends there) always runs in the pass."""
    jobs: List[Future] = []
    for z, inputs, layer, columns in layers:
        grads = partial(linear_weight_gradients, inputs=inputs, layer=layer, columns=columns)
        if helper is None or z.is_leaf:
            z.register_hook(grads)
        else:
            z.register_hook(lambda g, grads=grads: jobs.append(helper.submit(grads, g)))
    return jobs


class Part:
    """One part of the update: submitted to the helper thread, or (without one) run in the caller's
    thread when :meth:`result` is first asked for (the same ops either way)."""

    def __init__(self, helper: Optional[ThreadPoolExecutor], fn: Callable[..., Any], *args: Any):
        self.fn, self.args = fn, args
        self.future: Optional[Future] = helper.submit(fn, *args) if helper is not None else None

    def result(self) -> Any:
        return self.future.result() if self.future is not None else self.fn(*self.args)

    def settle(self) -> None:
        """Wait for the helper's run, if it was given one (a part not needed any more is not run)."""
        if self.future is not None:
            self.future.result()


__all__ = ["helper_thread", "usable_cores", "linear_weight_gradients", "hook_weight_gradients", "Part"]
