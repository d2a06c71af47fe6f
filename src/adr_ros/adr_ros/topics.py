"""Names of the topics and services the ADR nodes share (relative: a launch namespace applies)."""

PROPOSALS = "adr/proposals"
PROPOSE_SERVICE = "adr/propose_parameters"
PARTICLE_REWARDS = "adr/particle_rewards"
SAMPLER_STATE = "adr/sampler_state"
TRAJECTORIES = "adr/trajectories"
POLICY_WEIGHTS = "adr/policy_weights"
