"""Names of the topics, services and actions the ADR nodes share (relative: a launch namespace applies).

See docs/node_graph.md for who publishes and who listens.
"""

PROPOSALS = "adr/proposals"
PROPOSE_SERVICE = "adr/propose_parameters"
PARTICLE_REWARDS = "adr/particle_rewards"
SAMPLER_STATE = "adr/sampler_state"
TRAJECTORIES = "adr/trajectories"
ACCEPTED_TRAJECTORIES = "adr/accepted_trajectories"  # the trainer's acceptance: what the discriminator scores
TRAJECTORY_RECEIPTS = "adr/trajectory_receipts"  # the consumers' signed answers to an instance's probe
SIGNED_METRICS = "adr/signed_metrics"  # every node's metrics, signed: what adr_viewer shows
POLICY_WEIGHTS = "adr/policy_weights"
SAMPLER_SAVE_CHECKPOINT = "adr/save_checkpoint"
DISCRIMINATOR_SAVE_CHECKPOINT = "adr/discriminator/save_checkpoint"
ROLL_OUT_ACTION = "roll_out"  # private to each simulator instance: <instance name>/roll_out
# the nodes that serve the run's services: a request is signed for its server (adr_ros.signing)
SAMPLER_NODE = "adr_sampler"
DISCRIMINATOR_NODE = "adr_discriminator"


def roll_out_action(instance: str) -> str:
    return f"{instance}/{ROLL_OUT_ACTION}"


def sim_instance_name(index: int) -> str:
    return f"adr_sim_{index}"
SAMPLE_HISTOGRAM = "adr/sample_histogram"
