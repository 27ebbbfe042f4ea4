import AQTestSupport
import Foundation
import Testing

/// Other packages depend on this one (issue 10, "Products"): a throwaway package outside the
/// tree that depends on it by path, imports `AudioToolbox` and `AudioQueue`, builds and runs.
/// No server needed. Slow (it builds the package's modules in its own folder, about a minute).
@Suite("the libraries as products of an outside package (no server needed)")
struct OutsidePackageTests {
    @Test("an outside package with .product(name: \"AudioToolbox\") and \"AudioQueue\" builds, and Apple-spelled code in it runs: an unused OSStatus draws no warning, CF's byte-order functions swap")
    func outsidePackageBuilds() throws {
        let root = #filePath.components(separatedBy: "/Tests/")[0]
        // A path dependency's package name is its folder's name ("aqjack" in a clone named so).
        let packageName = URL(fileURLWithPath: root).lastPathComponent
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-porter-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/Sources/Porter", withIntermediateDirectories: true)
        let manifest = """
            // swift-tools-version:6.1
            import PackageDescription

            let package = Package(
                name: "Porter",
                dependencies: [.package(path: "\(root)")],
                targets: [
                    .executableTarget(name: "Porter", dependencies: [
                        .product(name: "AudioToolbox", package: "\(packageName)"),
                        .product(name: "AudioQueue", package: "\(packageName)"),
                    ]),
                ]
            )
            """
        let program = """
            import AudioQueue
            import AudioToolbox

            // As macOS code completes a format: Apple's names, types and codes.
            var format = AudioStreamBasicDescription()
            format.mFormatID = kAudioFormatLinearPCM
            format.mSampleRate = 44100
            format.mChannelsPerFrame = 2
            format.mBitsPerChannel = 16
            format.mFormatFlags = kLinearPCMFormatFlagIsSignedInteger
            var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
            let status: OSStatus = AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, nil, &size, &format)
            print(status == noErr ? "bytes per frame \\(format.mBytesPerFrame)" : "status \\(status)")
            // An OSStatus left unused, as C calls are written (no warning: @discardableResult).
            AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, nil, &size, &format)
            // CoreFoundation's byte-order functions, for big-endian file fields.
            print(CFSwapInt32HostToBig(0x0102_0304) == 0x0403_0201 && CFSwapInt16BigToHost(0x3412) == 0x1234
                  && CFConvertFloat32SwappedToHost(CFConvertFloat32HostToSwapped(0.5)) == 0.5 ? "swapped" : "not swapped")
            """
        try manifest.write(toFile: folder + "/Package.swift", atomically: true, encoding: .utf8)
        try program.write(toFile: folder + "/Sources/Porter/main.swift", atomically: true, encoding: .utf8)
        let build = try ExternalTool.run("swift", ["build", "--package-path", folder])
        #expect(build.status == 0, "\(build.standardOutput.suffix(3000)) \(build.standardError.suffix(3000))")
        let porterWarnings = (build.standardOutput + build.standardError).split(separator: "\n").filter { $0.contains("Porter/main.swift") && $0.contains("warning") }
        #expect(porterWarnings.isEmpty, "\(porterWarnings)")
        let run = try ExternalTool.run(folder + "/.build/debug/Porter", [])
        #expect(run.status == 0 && run.standardOutput == "bytes per frame 4\nswapped\n", "\(run.standardOutput) \(run.standardError)")
    }
}
