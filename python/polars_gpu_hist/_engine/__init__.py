"""What the engine decides and keeps: ``explain`` (the decision a call runs) and pins
(columns kept on the GPU)."""
