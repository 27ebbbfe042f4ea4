import AQMedia
import CAudioTypes
import Testing

/// The bulk sample loops (``LinearPCMLayout/encode(_:count:to:byteStride:)``, `decode(from:into:count:)`)
/// have fast paths of their own; each must write and read exactly what the per-sample functions do.
@Suite("LinearPCMLayout bulk loops")
struct LinearPCMLayoutTests {
    static let samples: [Float] = [0, 1, -1, 0.5, -0.25, 1e-7, -3.0e-9, 0.999_999, .leastNormalMagnitude, 2.5, -7]

    @Test("bulk encode writes what per-sample encode writes: float and integer, either byte order, packed and interleaved",
          arguments: [(32, true), (64, true), (16, false), (24, false), (32, false)], [false, true])
    func encodeMatchesPerSample(format: (bits: Int, float: Bool), bigEndian: Bool) throws {
        let layout = try LinearPCMLayout(validating: AudioFileWriterTests.format(bits: format.bits, float: format.float, bigEndian: bigEndian))
        for stride in [layout.bytesPerSample, layout.bytesPerSample * 3] {
            var bulk = [UInt8](repeating: 0xAA, count: stride * Self.samples.count)
            var single = bulk
            bulk.withUnsafeMutableBytes { bytes in
                layout.encode(Self.samples, count: Self.samples.count, to: bytes.baseAddress!, byteStride: stride)
            }
            single.withUnsafeMutableBytes { bytes in
                for (index, sample) in Self.samples.enumerated() { layout.encode(sample, to: bytes.baseAddress! + index * stride) }
            }
            #expect(bulk == single, "\(format.bits)-bit \(format.float ? "float" : "integer"), big-endian \(bigEndian), stride \(stride)")
            // And back: a packed run decodes as the per-sample decode reads it.
            if stride == layout.bytesPerSample {
                var decoded = [Float](repeating: .nan, count: Self.samples.count)
                bulk.withUnsafeBytes { bytes in layout.decode(from: bytes.baseAddress!, into: &decoded, count: Self.samples.count) }
                let expected = single.withUnsafeBytes { bytes in
                    (0 ..< Self.samples.count).map { layout.decode(from: bytes.baseAddress! + $0 * stride) }
                }
                #expect(decoded.map(\.bitPattern) == expected.map(\.bitPattern))
            }
        }
    }
}
