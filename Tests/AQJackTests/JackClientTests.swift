import AQCore
import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Synchronization
import Testing

extension JackServerSuite {
    @Suite("JACK client wrapper")
    struct JackClientTests {
        @Test("opening a client on a missing server fails fast, naming the server, without starting one")
        func missingServer() throws {
            let name = "aqjack-missing-\(getpid())"
            let started = Date()
            #expect {
                _ = try JackClient(name: "probe", server: name)
            } throws: { error in
                guard case let .serverNotRunning(server, status)? = error as? JackError else { return false }
                return server == name && status.contains(.failure) && status.contains(.serverFailed)
                    && "\(error)".contains("'\(name)'") && "\(error)".contains("jackd -n \(name)")
            }
            #expect(Date().timeIntervalSince(started) < 2)
            #expect(!FileManager.default.fileExists(atPath: "/dev/shm/jack_\(name)_0_0"))
        }

        @Test("a client reports the test server's rate and period")
        func serverFacts() throws {
            let client = try JackClient(name: TestServer.uniqueClientName("facts"))
            #expect(client.serverName == TestServer.name)
            #expect(client.sampleRate == 48000)
            #expect(client.bufferSize == 128)
            #expect(client.name.hasPrefix("aqtest-facts-"))
        }

        @Test("an exact client name already taken is refused, and the message says so")
        func duplicateName() throws {
            let name = TestServer.uniqueClientName("dup")
            let first = try JackClient(name: name, exactName: true)
            #expect {
                _ = try JackClient(name: name, exactName: true)
            } throws: { error in
                // jackd2 1.9.21 answers 0x21 (JackFailure | JackServerError), not JackNameNotUnique.
                guard case let .openFailed(server, client, status)? = error as? JackError else { return false }
                return server == TestServer.name && client == name && status.contains(.failure)
                    && "\(error)".contains("already")
            }
            first.close()
        }

        @Test("ports register, connect, list with flags, connections, aliases-free names and pretty-names, and disconnect")
        func portsAndConnections() throws {
            let pair = try GeneratorCapturePair(role: "ports", channelCount: 2, capacityFrames: 4096)
            let (generator, capture) = (pair.generator, pair.capture)
            try capture.client.setPrettyName("Left input", ofPort: capture.ports[0].name)

            let info = try #require(capture.client.portInfo(named: capture.ports[0].name))
            #expect(info.direction == .input)
            #expect(info.type == "32 bit float mono audio")
            #expect(info.clientName == capture.client.name)
            #expect(info.shortName == "in_1")
            #expect(!info.isPhysical)
            #expect(info.connections == [generator.portNames[0]])
            #expect(info.prettyName == "Left input")
            #expect(capture.ports[1].connections == [generator.portNames[1]])

            let all = capture.client.allPortInfo()
            let generatorPort = try #require(all.first { $0.name == generator.portNames[1] })
            #expect(generatorPort.direction == .output)
            #expect(generatorPort.connections == [capture.ports[1].name])
            let system = try #require(all.first { $0.name == "system:capture_1" })
            #expect(system.isPhysical && system.isTerminal && system.direction == .output)

            try capture.client.disconnect(generator.portNames[0], from: capture.ports[0].name)
            #expect(capture.ports[0].connections.isEmpty)
            #expect {
                try capture.client.connect("nobody:out", to: capture.ports[0].name)
            } throws: { ($0 as? JackError) == .noSuchPort("nobody:out") }
        }

        @Test("a callback that sleeps past its cycle is logged as stalled: its frame time, its wall time, and little CPU time")
        func stalledCallbackLogged() throws {
            let client = try JackClient(name: TestServer.uniqueClientName("stall"))
            let processor = StallingProcessor(stallAt: 100, sleepMicroseconds: 6_000)
            try client.activate(processor: processor)
            let deadline = Date().addingTimeInterval(5)
            while processor.callbacks.load(ordering: .relaxed) < 200 && Date() < deadline { usleep(10_000) }
            client.close()
            let stalledAt = processor.stalledFrameTime.load(ordering: .relaxed)
            #expect(processor.callbacks.load(ordering: .relaxed) >= 200)
            let stall = try #require(client.stalledCycleDetails.first { $0.frameTime == stalledAt },
                                     "no stall logged at frame \(stalledAt): \(client.stalledCycleDetails)")
            #expect(stall.durationMicros >= 6_000)
            // Asleep, the thread used almost no CPU: a stall that is the system's, not the work's.
            #expect(stall.cpuMicros < stall.durationMicros / 2, "\(stall)")
            #expect(client.processTiming.stalledCycles >= 1)
        }

        @Test("port registration of another client is reported on the notification thread")
        func portRegistrationNotification() throws {
            let watcher = try JackClient(name: TestServer.uniqueClientName("watch"))
            let seen = LockedList()
            try watcher.notifications.onPortRegistration { name, registered in seen.append("\(registered ? "+" : "-")\(name)") }
            try watcher.activate()
            // JACK announces ports of active clients only.
            let other = try JackClient(name: TestServer.uniqueClientName("reg"), exactName: true)
            try other.activate()
            let port = try other.registerPort("extra", direction: .output)
            let portName = port.name
            try other.unregister(port)
            let deadline = Date().addingTimeInterval(2)
            while seen.values.filter({ $0.hasSuffix(portName) }).count < 2 && Date() < deadline { usleep(10_000) }
            #expect(seen.values.filter { $0.hasSuffix(portName) } == ["+\(portName)", "-\(portName)"], "\(seen.values)")
            other.close()
            watcher.close()
        }

        @Test("a first port registration handler on an active or closed client is refused with invalidState")
        func portRegistrationHandlerTooLate() throws {
            // The callback is installed with the first handler, and JACK takes callbacks only
            // before activation: later, the refusal is an error, not a handler never called.
            let client = try JackClient(name: TestServer.uniqueClientName("late"))
            try client.activate()
            let refusal = #expect(throws: JackError.self) { try client.notifications.onPortRegistration { _, _ in } }
            guard case .invalidState(let message)? = refusal else {
                Issue.record("expected invalidState, got \(String(describing: refusal))")
                return
            }
            #expect(message.contains("before the client is activated"), "\(message)")
            #expect(refusal?.status == -66678)
            // Clearing the handler needs no callback, so it is always accepted.
            try client.notifications.onPortRegistration(nil)
            client.close()
            let afterClose = #expect(throws: JackError.self) { try client.notifications.onPortRegistration { _, _ in } }
            guard case .invalidState(let closedMessage)? = afterClose else {
                Issue.record("expected invalidState, got \(String(describing: afterClose))")
                return
            }
            #expect(closedMessage.contains("closed"), "\(closedMessage)")
        }

        @Test("MIDI events a port cannot carry are counted, never dropped silently: of frames 10, 3 (before the previous event) and 200 (past a 128-frame cycle) written each cycle for 20 cycles, the capture client gets the 20 at frame 10 and processTiming.midiEventsLost is 40")
        func refusedMIDIEventsCounted() throws {
            let capture = try MIDICaptureClient(name: TestServer.uniqueClientName("lostcap"))
            let processor = UnorderedMIDIWriter(cycles: 20)
            let client = try JackClient(name: TestServer.uniqueClientName("lostmidi"), exactName: true)
            let port = try client.registerPort("midi_out", direction: .output, isMIDI: true)
            try client.activate(processor: processor, midiOutputs: [port])
            defer { client.close() }
            _ = try client.connect(port.name, to: capture.portName)
            usleep(100_000)
            processor.armed.store(true, ordering: .releasing)
            for _ in 0 ..< 200 where processor.written.load(ordering: .acquiring) < 20 { usleep(10_000) }
            usleep(100_000)
            #expect(processor.written.load(ordering: .relaxed) == 20)
            let got = capture.events
            #expect(got.count == 20 && got.allSatisfy { $0.bytes == [0x90, 60, 100] && $0.frame % 128 == 10 }, "\(got.prefix(4))")
            #expect(client.processTiming.midiEventsLost == 40)
        }
    }
}

/// Writes, in each of its first `cycles` cycles once armed, a note-on at frame 10, then one at
/// frame 3 (out of order: JACK refuses it) and one at frame 200 (past the cycle).
final class UnorderedMIDIWriter: RealtimeProcessor, @unchecked Sendable {
    let cycles: Int
    let armed = Atomic<Bool>(false)
    let written = Atomic<Int>(0)
    private let message = UnsafeMutablePointer<UInt8>.allocate(capacity: 3)

    init(cycles: Int) {
        self.cycles = cycles
        message.initialize(from: [0x90, 60, 100], count: 3)
    }

    deinit { message.deallocate() }

    static let realtimeEntry: RealtimeEntry = { processor, cycle in
        let writer = Unmanaged<UnorderedMIDIWriter>.fromOpaque(processor).takeUnretainedValue()
        let cycle = cycle.load(as: ProcessCycle.self)
        guard writer.armed.load(ordering: .acquiring), writer.written.load(ordering: .relaxed) < writer.cycles,
              let output = cycle.midiOutputs.first else { return }
        for (slot, frame) in [UInt32(10), 3, 200].enumerated() {
            output.events[slot] = MIDIEvent(frame: frame, size: 3, bytes: UnsafePointer(writer.message))
        }
        output.count.pointee = 3
        writer.written.add(1, ordering: .relaxed)
    }
}

/// A list appended to from JACK's notification thread.
final class LockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ item: String) { lock.lock(); items.append(item); lock.unlock() }
    var values: [String] { lock.lock(); defer { lock.unlock() }; return items }
}

/// Counts its callbacks and sleeps once, in callback `stallAt`, for `sleepMicroseconds` (a
/// stand-in for a thread the system stops; deliberately not real-time safe).
final class StallingProcessor: RealtimeProcessor, @unchecked Sendable {
    let stallAt: Int
    let sleepMicroseconds: UInt32
    let callbacks = Atomic<Int>(0)
    let stalledFrameTime = Atomic<UInt32>(0)

    init(stallAt: Int, sleepMicroseconds: UInt32) {
        self.stallAt = stallAt
        self.sleepMicroseconds = sleepMicroseconds
    }

    static let realtimeEntry: RealtimeEntry = { processor, cycle in
        let stalling = Unmanaged<StallingProcessor>.fromOpaque(processor).takeUnretainedValue()
        if stalling.callbacks.add(1, ordering: .relaxed).newValue == stalling.stallAt {
            stalling.stalledFrameTime.store(cycle.load(as: ProcessCycle.self).frameTime, ordering: .relaxed)
            usleep(stalling.sleepMicroseconds)
        }
    }
}
