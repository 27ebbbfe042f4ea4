/// The offline driver's transport (``OfflineDriver`` is its ``AudioTransport``), by JACK's rules,
/// decided at the start of each cycle on the driver's thread:
///
/// - a start, stop or locate asked for between cycles takes effect at the next cycle (the last
///   start or stop asked for wins; a locate is applied first);
/// - a start, or a locate while rolling, makes the transport *starting*: before each cycle the
///   slow-sync processor (``TransportSyncing``), if there is one, is asked whether it is ready at
///   the transport frame, and the cycle in which it says so rolls. Without one it rolls at once;
///   after ``OfflineDriver/transportSyncTimeoutFrames`` of waiting it rolls anyway (JACK's sync
///   timeout, 2 s by default), as JACK does;
/// - a locate while stopped asks the slow-sync processor once a cycle until it is ready (JACK
///   polls its slow-sync clients after a reposition); the transport stays stopped;
/// - a rolling cycle moves the transport frame on by its length (32 bits, wrapping, as JACK's).
struct OfflineTransport {
    private enum Phase { case stopped, starting, rolling }
    private var phase = Phase.stopped
    private var frame: UInt32 = 0
    /// A locate while stopped that the slow-sync processor has not acknowledged yet.
    private var repositioned = false
    /// Frames run while starting, for the timeout.
    private var waitedFrames = 0
    private var requestedRolling: Bool?
    private var requestedFrame: UInt32?

    var state: TransportState {
        TransportState(isRolling: phase == .rolling, isStartingOrRolling: phase != .stopped, frame: frame)
    }

    mutating func requestStart() { requestedRolling = true }
    mutating func requestStop() { requestedRolling = false }
    mutating func requestLocate(to frame: UInt32) { requestedFrame = frame }

    /// Applies the requests and the slow-sync answer for a cycle of `frameCount` frames; returns
    /// whether it rolls and the transport frame of its first frame. `sync` asks the slow-sync
    /// processor (`starting`, `position`), nil without one.
    mutating func beginCycle(frameCount: Int, timeoutFrames: Int, sync: ((Bool, UInt32) -> Bool)?) -> (rolling: Bool, frame: UInt32) {
        if let target = requestedFrame {
            requestedFrame = nil
            frame = target
            if phase == .stopped {
                repositioned = true
            } else {
                phase = .starting
                waitedFrames = 0
            }
        }
        if let rolling = requestedRolling {
            requestedRolling = nil
            if rolling, phase == .stopped {
                phase = .starting
                waitedFrames = 0
            } else if !rolling {
                phase = .stopped
            }
        }
        switch phase {
        case .starting:
            repositioned = false
            if sync?(true, frame) ?? true || waitedFrames >= timeoutFrames {
                phase = .rolling
            } else {
                waitedFrames += frameCount
            }
        case .stopped:
            if repositioned, sync?(false, frame) ?? true { repositioned = false }
        case .rolling:
            break
        }
        return (phase == .rolling, frame)
    }

    /// Moves a rolling transport on by the cycle's frames.
    mutating func endCycle(frameCount: Int) {
        if phase == .rolling { frame &+= UInt32(truncatingIfNeeded: frameCount) }
    }
}
