"""What an agent is put through: the scenario model, its faults as data, the wire bytes.

The agent wing's lowest floor, as recordings/ is the stream half's: :mod:`.model` reads a
scenario file (a conversation with its faults), :mod:`.faults` is the fault space (a place
and an ending, or a mutation), :mod:`.render` turns one scripted response into a
protocol's bytes and says what was really delivered. Nothing here runs an agent.
"""
