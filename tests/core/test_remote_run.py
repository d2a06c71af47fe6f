"""Algorithm 1 over remote steps (adr_core.engine.remote, the loop the trainer node runs): with the steps done in
this process (the same core calls the sampler, simulator and discriminator nodes make) it gives the in-process
trainer's rows bit for bit; an iteration whose feedback never came while the run stops is undone; a stop request
from a step ends the loop."""
from __future__ import annotations

import threading

import numpy as np
import pytest
from tiny_configs import tiny_config

from adr_core.agents import ActorPolicy
from adr_core.engine.hooks import Hook
from adr_core.engine.loop import Engine
from adr_core.engine.remote import remote_engine
from adr_core.engine.steps import StopRequested
from adr_core.iteration import Feedback, Proposals, Rollouts, propose, roll_out, score_then_train, update_sampler
from adr_core.training.trainer import Trainer


class LocalSteps:
    """The steps protocol in this process: the sampler node's propose/update, the simulator node's rollouts, the
    discriminator node's score-then-train, over a Trainer's components. As in the graph, the discriminator and the
    sampler react to an iteration's trajectories as soon as they exist, whatever the learner is doing."""

    def __init__(self, trainer: Trainer, lose_feedback_of: int | None = None,
                 stop_in_propose_of: int | None = None, stop_when_lost: bool = True) -> None:
        self.parts = trainer.components()
        self.agent = trainer.agent
        self.published: list[dict] = []
        self.answers: dict[int, Feedback] = {}
        self.lose_feedback_of, self.stop_in_propose_of = lose_feedback_of, stop_in_propose_of
        self.stop_when_lost = stop_when_lost  # False: the answer is lost on the wire, nobody asked to stop
        self.stop = threading.Event()

    @property
    def sampler_learns(self) -> bool:
        return self.parts.sampler.learns_from_rewards

    def propose(self, k: int) -> Proposals:
        if k == self.stop_in_propose_of:
            self.stop.set()
            raise StopRequested
        return propose(self.parts.sampler, self.parts.space)

    def roll_out(self, k: int, proposals: Proposals, min_version: int) -> Rollouts:
        policy = ActorPolicy.from_state_dict(self.published[-1])
        pairs = [roll_out(self.parts.randomized_env, self.parts.reference_env, policy, proposals, slot, k,
                          self.parts.rollouts, self.agent.policy_version, with_reference=self.sampler_learns)
                 for slot in range(len(proposals.normalized))]
        randomized, reference = [r for r, _ in pairs], [ref for _, ref in pairs if ref is not None]
        rewards, metrics = score_then_train(self.parts.discriminator, randomized, reference)
        sampler_metrics = None if k == self.lose_feedback_of else update_sampler(self.parts.sampler, rewards)
        self.answers[k] = Feedback(rewards, sampler_metrics, metrics)
        return Rollouts(randomized, reference)

    def publish_weights(self) -> None:
        self.published.append({name: value.clone() for name, value in self.agent.actor_state_dict().items()})

    def feedback(self, k: int, rollouts: Rollouts) -> Feedback:
        if k == self.lose_feedback_of and self.stop_when_lost:
            self.stop.set()  # the graph stops: the sampler's answer of k never comes
        return self.answers.pop(k)


class Rows(Hook):
    def __init__(self) -> None:
        self.rows: list[dict] = []

    def after_row(self, run, result, row) -> None:
        self.rows.append(row)


COMPARED = ("iteration", "agent_steps", "agent_updates", "return_mean", "reference_return_mean", "critic_loss",
            "actor_loss", "sampler_reward_mean", "d_randomized", "d_reference", "solved_fraction")


def remote(config, steps_kwargs=None) -> tuple[Engine, LocalSteps, Rows]:
    trainer = Trainer(config)
    steps = LocalSteps(trainer, **(steps_kwargs or {}))
    run = remote_engine(trainer.agent, config, steps, overlap=False, stop_requested=steps.stop, warn=lambda text: None)
    rows = Rows()
    run.start([rows])
    return run, steps, rows


def test_remote_steps_done_in_process_give_the_trainers_rows_bit_for_bit() -> None:
    config = tiny_config(total_agent_steps=900)
    expected = Trainer(config).run()
    run, _, rows = remote(config)
    run.run()
    assert len(rows.rows) == len(expected) >= 3
    for got, want in zip(rows.rows, expected):
        for column in COMPARED:
            assert got.get(column) == want.get(column) or (np.isnan(got[column]) and np.isnan(want[column])), column


def test_an_iteration_whose_feedback_never_came_while_stopping_is_undone() -> None:
    config = tiny_config(total_agent_steps=5000)
    run, steps, rows = remote(config, {"lose_feedback_of": 2})
    run.run()
    assert [row["iteration"] for row in rows.rows] == [0, 1]
    assert run.iteration == 2  # sync: iteration 2 is redone on resume
    assert run.agent_steps == rows.rows[-1]["agent_steps"]  # the agent is back at its state after iteration 1


def test_sync_feedback_lost_without_a_stop_undoes_the_iteration_and_ends_the_run_with_the_reason() -> None:
    """Issue 47: rewards lost on the wire used to give a row without the sampler's columns and a run whose final
    checkpoint could not be written; now the iteration is undone and the run ends saying why."""
    config = tiny_config(total_agent_steps=5000)
    run, steps, rows = remote(config, {"lose_feedback_of": 2, "stop_when_lost": False})
    run.run()
    assert [row["iteration"] for row in rows.rows] == [0, 1] and not steps.stop.is_set()
    assert run.iteration == 2 and not run.done
    assert run.agent_steps == rows.rows[-1]["agent_steps"]
    assert run.failure == ("iteration 2 did not complete: the sampler's update did not arrive within the wait; the "
                           "agent is back at its state after iteration 1")


def test_a_stop_request_from_a_step_ends_the_loop_between_two_steps() -> None:
    run, _, rows = remote(tiny_config(total_agent_steps=5000), {"stop_in_propose_of": 1})
    with pytest.raises(StopRequested):
        run.run()
    assert [row["iteration"] for row in rows.rows] == [0] and run.iteration == 1


def test_overlapping_learning_with_the_next_rollouts_logs_every_iteration_in_order() -> None:
    config = tiny_config(total_agent_steps=900)
    trainer = Trainer(config)
    steps = LocalSteps(trainer)
    run = remote_engine(trainer.agent, config, steps, overlap=True, stop_requested=steps.stop, warn=lambda text: None)
    rows = Rows()
    run.start([rows])
    run.run()
    assert [row["iteration"] for row in rows.rows] == list(range(run.iteration)) and run.done
    assert rows.rows[-1]["agent_steps"] == trainer.agent.transitions_seen >= config.total_agent_steps
