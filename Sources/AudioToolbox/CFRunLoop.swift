import Foundation

/// A thread's run loop, as audio queues created with one deliver their callbacks: work posted
/// to it runs on the thread that runs it, in the mode it was posted for, when that thread runs
/// either `CFRunLoopRunInMode`/`CFRunLoopRun` (this loop) or Foundation's `RunLoop` of the same
/// thread (`RunLoop.main.run()`, `run(until:)`, `run(mode:before:)`, a `Timer`-driven program):
/// on Apple's platforms the two are one loop, and code written for them runs either.
///
/// How: each post arms a zero-delay `Timer` in the post's mode on the thread's Foundation run
/// loop (at most one armed per mode), whose firing runs the posted work; `CFRunLoopRunInMode`
/// takes posted work itself and, between posts, runs Foundation's loop in slices of
/// ``sliceSeconds`` so that the program's own timers fire as on Apple's. Modes are Apple's: work
/// posted for `kCFRunLoopCommonModes` runs in the default mode and the common modes, work
/// posted for another mode only while the loop runs in that mode.
///
/// Work that has waited ``lateSeconds`` for a run of its loop is reported once on standard error
/// (an audio queue whose callbacks wait that long runs out of buffers: a recording loses frames,
/// a playback plays silence) and each such post is counted in ``lateCount``.
///
/// Threads: ``perform(mode:_:)`` and ``stop()`` from any thread; the runs on the loop's thread.
public final class CFRunLoop: @unchecked Sendable {
    /// The longest a run of Foundation's loop inside `CFRunLoopRunInMode` lasts before posted
    /// work, a stop and the deadline are looked at again (seconds).
    static let sliceSeconds = 0.01
    /// How long posted work may wait for a run of its loop before it is reported (seconds).
    static let lateSeconds = 2.0

    /// Foundation's run loop of the same thread.
    private let foundation: RunLoop
    private let lock = NSCondition()
    private var pending: [(mode: String, posted: Date, work: () -> Void)] = []
    private var stopRequested = false
    /// Modes with a wake-up timer on ``foundation`` that has not fired yet.
    private var armed: Set<String> = []
    /// Posted work run so far (by either loop).
    private var handled = 0
    private var warned = false
    /// Whether a lateness check is scheduled (``watchLateness()``).
    private var watching = false
    /// Times posted work was found waiting longer than ``lateSeconds``.
    private(set) var lateCount = 0

    init(foundation: RunLoop) { self.foundation = foundation }

    static let defaultMode = CFRunLoopMode.defaultMode.rawValue as String
    static let commonModes = CFRunLoopMode.commonModes.rawValue as String

    /// Whether work posted for `posted` runs while the loop runs in `running`.
    private static func matches(_ posted: String, running: String) -> Bool {
        posted == running || (posted == commonModes && running == defaultMode)
    }

    /// Posts `work` to run on this loop's thread in `mode` (`kCFRunLoopCommonModes` when nil).
    func perform(mode: String? = nil, _ work: @escaping () -> Void) {
        let mode = mode ?? Self.commonModes
        lock.lock()
        pending.append((mode, Date(), work))
        let arm = armed.insert(mode).inserted
        let watch = !watching
        watching = true
        lock.signal()
        lock.unlock()
        if watch { watchLateness(after: Self.lateSeconds) }
        if arm {
            let timer = Timer(timeInterval: 0, repeats: false) { [weak self] _ in self?.wakeUp(mode: mode) }
            foundation.add(timer, forMode: RunLoop.Mode(mode))
        }
    }

    /// Looks, `seconds` from now and then as long as work is waiting, whether the oldest posted
    /// work has waited ``lateSeconds``: counts each time it has, and says so once.
    private func watchLateness(after seconds: Double) {
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in
            guard let self else { return }
            lock.lock()
            guard let oldest = pending.first?.posted else {
                watching = false
                lock.unlock()
                return
            }
            let waited = Date().timeIntervalSince(oldest)
            let late = waited >= Self.lateSeconds
            if late { lateCount += 1 }
            let warn = late && !warned
            if warn { warned = true }
            lock.unlock()
            if warn {
                FileHandle.standardError.write(Data(("aqjack: audio queue callbacks have waited more than \(Int(Self.lateSeconds)) s for their run loop: "
                    + "run it (CFRunLoopRunInMode, CFRunLoopRun, RunLoop.run), or create the queue with no run loop or with a dispatch queue; "
                    + "meanwhile a recording queue loses the frames its buffers cannot hold, a playback queue plays silence\n").utf8))
            }
            watchLateness(after: late ? Self.lateSeconds : Self.lateSeconds - waited)
        }
    }

    /// A wake-up timer of `mode` fired on Foundation's loop: runs the work posted for it.
    private func wakeUp(mode: String) {
        lock.lock()
        armed.remove(mode)
        var ready: [() -> Void] = []
        pending.removeAll { item in
            guard item.mode == mode else { return false }
            ready.append(item.work)
            return true
        }
        handled += ready.count
        lock.unlock()
        for work in ready { work() }
    }

    /// Takes the first posted work that runs in `mode`, counting it handled.
    private func takeWork(for mode: String) -> (() -> Void)? {
        guard let index = pending.firstIndex(where: { Self.matches($0.mode, running: mode) }) else { return nil }
        handled += 1
        return pending.remove(at: index).work
    }

    /// Runs the loop in `mode` for up to `seconds`: posted work, and Foundation's sources and
    /// timers of this thread. Returns after the first posted work when `returnAfterSourceHandled`.
    func run(mode: String, seconds: Double, returnAfterSourceHandled: Bool) -> CFRunLoopRunResult {
        let mode = mode == Self.commonModes ? Self.defaultMode : mode
        let deadline = Date().addingTimeInterval(seconds)
        lock.lock()
        defer { lock.unlock() }
        while true {
            if stopRequested {
                stopRequested = false
                return .stopped
            }
            if let work = takeWork(for: mode) {
                lock.unlock()
                work()
                lock.lock()
                if returnAfterSourceHandled { return .handledSource }
                continue
            }
            let now = Date()
            if now >= deadline { return .timedOut }
            let slice = min(deadline, now.addingTimeInterval(Self.sliceSeconds))
            let before = handled
            lock.unlock()
            let ran = foundation.run(mode: RunLoop.Mode(mode), before: slice)
            lock.lock()
            if returnAfterSourceHandled && handled != before { return .handledSource }
            // Nothing of Foundation's to run in this mode: wait for a post.
            if !ran && pending.isEmpty && !stopRequested { _ = lock.wait(until: slice) }
        }
    }

    func stop() {
        lock.lock()
        stopRequested = true
        lock.signal()
        lock.unlock()
    }

    nonisolated(unsafe) private static var key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The main thread's loop (`CFRunLoopGetMain`), with Foundation's `RunLoop.main`.
    static let main = CFRunLoop(foundation: RunLoop.main)

    /// The calling thread's run loop, made on first use (the main thread's is ``main``).
    static var current: CFRunLoop {
        if Thread.isMainThread { return main }
        if let existing = pthread_getspecific(key) {
            return Unmanaged<CFRunLoop>.fromOpaque(existing).takeUnretainedValue()
        }
        let loop = CFRunLoop(foundation: RunLoop.current)
        pthread_setspecific(key, Unmanaged.passRetained(loop).toOpaque())
        return loop
    }
}

/// `CFRunLoopGetCurrent`: the calling thread's run loop.
public func CFRunLoopGetCurrent() -> CFRunLoop! { CFRunLoop.current }

/// `CFRunLoopGetMain`: the main thread's run loop.
public func CFRunLoopGetMain() -> CFRunLoop! { CFRunLoop.main }

/// `CFRunLoopRunInMode`: runs the calling thread's run loop in `mode` for up to `seconds`,
/// handling the callbacks posted for that mode and Foundation's timers of the thread.
@discardableResult
public func CFRunLoopRunInMode(_ mode: CFString!, _ seconds: CFTimeInterval, _ returnAfterSourceHandled: Bool) -> CFRunLoopRunResult {
    CFRunLoop.current.run(mode: (mode as String?) ?? CFRunLoop.defaultMode, seconds: seconds, returnAfterSourceHandled: returnAfterSourceHandled)
}

/// `CFRunLoopRunInMode` with a `CFRunLoopMode` (`.defaultMode`, `.commonModes`).
@discardableResult
public func CFRunLoopRunInMode(_ mode: CFRunLoopMode!, _ seconds: CFTimeInterval, _ returnAfterSourceHandled: Bool) -> CFRunLoopRunResult {
    CFRunLoop.current.run(mode: (mode?.rawValue as String?) ?? CFRunLoop.defaultMode, seconds: seconds, returnAfterSourceHandled: returnAfterSourceHandled)
}

/// `CFRunLoopRun`: runs the calling thread's run loop in the default mode until `CFRunLoopStop`.
public func CFRunLoopRun() {
    while CFRunLoop.current.run(mode: CFRunLoop.defaultMode, seconds: 1e9, returnAfterSourceHandled: false) != .stopped {}
}

/// `CFRunLoopStop`.
public func CFRunLoopStop(_ loop: CFRunLoop!) { loop.stop() }
