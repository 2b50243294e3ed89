// placeholder until the simulated backend lands
