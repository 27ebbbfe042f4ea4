import AQGraph

/// Runs `runner` over `total` frames with no driver, in cycles of the lengths in `cycles`
/// (repeated in turn), its `inputs` channels filled by `input(channel, frame)`; returns each of
/// the `outputs` channels' frames. Test code, on the calling thread; allocates (not real time).
public func renderGraph(_ runner: GraphRunner, inputs: Int, outputs: Int, total: Int, cycles: [Int],
                        input: (_ channel: Int, _ frame: Int) -> Float) -> [[Float]] {
    precondition(!cycles.isEmpty && cycles.allSatisfy { $0 > 0 && $0 <= runner.maximumFrames })
    var result = [[Float]](repeating: [], count: outputs)
    let ins = (0 ..< inputs).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: runner.maximumFrames) }
    let outs = (0 ..< outputs).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: runner.maximumFrames) }
    defer { (ins + outs).forEach { $0.deallocate() } }
    var done = 0, next = 0
    while done < total {
        let frames = min(cycles[next % cycles.count], total - done)
        next += 1
        for channel in 0 ..< inputs { for frame in 0 ..< frames { ins[channel][frame] = input(channel, done + frame) } }
        ins.map { UnsafePointer($0) }.withUnsafeBufferPointer { inputPointers in
            outs.withUnsafeBufferPointer { outputPointers in runner.process(inputs: inputPointers, outputs: outputPointers, frames: frames) }
        }
        for channel in 0 ..< outputs { result[channel] += UnsafeBufferPointer(start: outs[channel], count: frames) }
        done += frames
    }
    return result
}
