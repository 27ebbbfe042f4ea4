import Testing

/// Every test that talks to the JACK server started by Scripts/test.sh, across test targets.
/// Serialized: the freewheel test changes the server's mode and the real-time tests must not
/// share the two cores with it.
@Suite("JACK server", .serialized)
public struct JackServerSuite {}
