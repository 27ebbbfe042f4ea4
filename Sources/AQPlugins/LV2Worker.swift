import AQCore
import CLV2Support
import Foundation
import Synchronization

/// The LV2 worker (`worker:schedule`): work a plugin schedules from `run()` is done by its
/// `work()` outside the audio thread, and the responses reach `work_response()` after a later
/// `run()`, then `end_run()` (LV2 Worker 1.2).
///
/// Threaded (the live host, whose `run()` is on the driver's process thread): requests go
/// through a ``MessageRing`` (locked in memory, as jalv's are) to a thread of the worker's own
/// (`aqjack-lv2-work`), woken with ``RealtimeWakeup``; responses come back through a second
/// ring. Nothing on the audio side allocates, locks or waits. Not threaded (queue stages and
/// offline rendering, whose `run()` is not real-time): `work()` runs inside `schedule_work()`,
/// so the same input always gives the same output.
///
/// Threads: made, bound and stopped on the instance's thread; ``schedule`` is called by the
/// plugin in `run()`; ``afterRun()`` right after each `run()`, on the same thread.
final class LV2Worker: @unchecked Sendable {
    /// The worker thread's name, as `ps -L` shows it.
    static let threadName = "aqjack-lv2-work"
    /// What the plugin said at instantiation: its handle and worker interface. Plain memory, so
    /// the audio thread reads it without Swift's exclusivity checks.
    private struct Binding {
        var handle: LV2_Handle?
        var interface: UnsafePointer<LV2_Worker_Interface>?
    }

    let isThreaded: Bool
    /// The feature's data for the plugin's feature list; its handle is this worker, unretained.
    let schedule: UnsafeMutablePointer<LV2_Worker_Schedule>
    private let binding: UnsafeMutablePointer<Binding>
    private let requests: MessageWriter
    private let requestReader: MessageReader
    private let responses: MessageWriter
    private let responseReader: MessageReader
    /// Where a message is copied for `work()` or `work_response()`: as large as a ring.
    private let requestScratch: UnsafeMutableRawBufferPointer
    private let responseScratch: UnsafeMutableRawBufferPointer
    private let wake = RealtimeWakeup()
    private let stopping = Atomic<Bool>(false)
    private let threadEnded = DispatchSemaphore(value: 0)
    private var threadRunning = false
    /// Requests refused for want of ring space so far. Any thread.
    let refused = Atomic<Int>(0)

    /// - Parameter ringBytes: each ring's size (a request or response that does not fit in a
    ///   ring's free space is refused with `LV2_WORKER_ERR_NO_SPACE`).
    init(threaded: Bool, ringBytes: Int) {
        isThreaded = threaded
        let requestRing = MessageRing(minimumBytes: ringBytes), responseRing = MessageRing(minimumBytes: ringBytes)
        requests = requestRing.writer
        requestReader = requestRing.reader
        responses = responseRing.writer
        responseReader = responseRing.reader
        requestScratch = .allocate(byteCount: requestReader.capacity, alignment: 16)
        responseScratch = .allocate(byteCount: responseReader.capacity, alignment: 16)
        binding = .allocate(capacity: 1)
        binding.initialize(to: Binding())
        schedule = .allocate(capacity: 1)
        schedule.initialize(to: LV2_Worker_Schedule(handle: nil, schedule_work: lv2WorkerSchedule))
        schedule.pointee.handle = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        stop()
        wake.destroy()
        requestScratch.deallocate()
        responseScratch.deallocate()
        binding.deallocate()
        schedule.deallocate()
    }

    /// Binds the instantiated plugin (`interface` from `extension_data(LV2_WORKER__interface)`;
    /// nil leaves scheduling refused) and, threaded and with an interface, starts the thread.
    /// Call before the first `run()`.
    func bind(handle: LV2_Handle?, interface: UnsafePointer<LV2_Worker_Interface>?) {
        binding.pointee = Binding(handle: handle, interface: interface)
        guard interface != nil, isThreaded, !threadRunning else { return }
        threadRunning = true
        let thread = Thread { [self] in
            ThreadNaming.nameCurrentThread(Self.threadName)
            serveRequests()
            threadEnded.signal()
        }
        thread.name = Self.threadName
        thread.start()
    }

    /// Stops the thread after the work it has. Not while the plugin runs. Idempotent.
    func stop() {
        guard threadRunning else { return }
        threadRunning = false
        stopping.store(true, ordering: .releasing)
        wake.signal()
        threadEnded.wait()
    }

    /// `schedule_work`, from the plugin's `run()`. Real-time safe when threaded.
    fileprivate func scheduleWork(size: UInt32, data: UnsafeRawPointer?) -> LV2_Worker_Status {
        let bound = binding.pointee
        guard let interface = bound.interface else { return LV2_WORKER_ERR_UNKNOWN }
        guard isThreaded else {
            // Not real-time: the work is done now, its responses delivered after this run().
            return interface.pointee.work?(bound.handle, lv2WorkerRespond, Unmanaged.passUnretained(self).toOpaque(), size, data)
                ?? LV2_WORKER_ERR_UNKNOWN
        }
        guard requests.write(UnsafeRawBufferPointer(start: data, count: Int(size))) else {
            refused.add(1, ordering: .relaxed)
            return LV2_WORKER_ERR_NO_SPACE
        }
        wake.signal()
        return LV2_WORKER_SUCCESS
    }

    /// `respond`, from the plugin's `work()` (on the worker's thread, or in `run()` unthreaded).
    fileprivate func respond(size: UInt32, data: UnsafeRawPointer?) -> LV2_Worker_Status {
        responses.write(UnsafeRawBufferPointer(start: data, count: Int(size))) ? LV2_WORKER_SUCCESS : LV2_WORKER_ERR_NO_SPACE
    }

    /// After each `run()`, on its thread: hands every pending response to `work_response()`,
    /// then calls `end_run()`. Real-time safe.
    func afterRun() {
        let bound = binding.pointee
        guard let interface = bound.interface else { return }
        while let size = responseReader.read(into: responseScratch) {
            _ = interface.pointee.work_response?(bound.handle, UInt32(size), responseScratch.baseAddress)
        }
        _ = interface.pointee.end_run?(bound.handle)
    }

    /// The worker thread: waits to be woken, does every request waiting, until stopped.
    private func serveRequests() {
        let me = Unmanaged.passUnretained(self).toOpaque()
        while true {
            wake.wait(milliseconds: 1000)
            let bound = binding.pointee
            while let size = requestReader.read(into: requestScratch) {
                _ = bound.interface?.pointee.work?(bound.handle, lv2WorkerRespond, me, UInt32(size), requestScratch.baseAddress)
            }
            if stopping.load(ordering: .acquiring) { return }
        }
    }
}

/// `run(handle, frames)` then the worker's ``LV2Worker/afterRun()``: what the live host runs for
/// a plugin with a worker (``PluginHostPorts/runHandle`` points at one of these).
struct LV2WorkerRunContext {
    var run: (@convention(c) (LV2_Handle?, UInt32) -> Void)?
    var handle: LV2_Handle?
    /// The worker, unretained (the instance keeps it).
    var worker: UnsafeMutableRawPointer
}

/// The live host's run function for a plugin with a worker. Real-time safe.
func lv2RunWithWorker(_ context: UnsafeMutableRawPointer?, _ frames: UInt32) {
    let run = context!.assumingMemoryBound(to: LV2WorkerRunContext.self)
    run.pointee.run?(run.pointee.handle, frames)
    Unmanaged<LV2Worker>.fromOpaque(run.pointee.worker)._withUnsafeGuaranteedRef { $0.afterRun() }
}

private func lv2WorkerSchedule(_ handle: LV2_Worker_Schedule_Handle?, _ size: UInt32, _ data: UnsafeRawPointer?) -> LV2_Worker_Status {
    Unmanaged<LV2Worker>.fromOpaque(handle!)._withUnsafeGuaranteedRef { $0.scheduleWork(size: size, data: data) }
}

private func lv2WorkerRespond(_ handle: LV2_Worker_Respond_Handle?, _ size: UInt32, _ data: UnsafeRawPointer?) -> LV2_Worker_Status {
    Unmanaged<LV2Worker>.fromOpaque(handle!)._withUnsafeGuaranteedRef { $0.respond(size: size, data: data) }
}
