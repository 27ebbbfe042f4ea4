import AQTestSupport
import Foundation
import Testing

/// Other packages depend on this one (issue 10, "Products"): `Tests/ApplePrograms/Porter`, an
/// executable of the outside package the Apple-style programs are built in, imports
/// `AudioToolbox` and `AudioQueue`, builds and runs. No server needed.
@Suite("the libraries as products of an outside package (no server needed)")
struct OutsidePackageTests {
    @Test("an outside package with .product(name: \"AudioToolbox\") and \"AudioQueue\" builds, and Apple-spelled code in it runs: an unused OSStatus draws no warning, CF's byte-order functions swap")
    func outsidePackageBuilds() throws {
        // Porter is compiled again by this build, so its warnings (there must be none) are printed.
        let (bin, output) = try ApplePrograms.build(recompiling: "Porter")
        #expect(output.contains("Porter/main.swift") || output.contains("Compiling Porter"), "the build did not compile Porter again: \(output.suffix(2000))")
        let porterWarnings = output.split(separator: "\n").filter { $0.contains("Porter/main.swift") && $0.contains("warning") }
        #expect(porterWarnings.isEmpty, "\(porterWarnings)")
        let run = try ExternalTool.run(bin + "/Porter", [])
        #expect(run.status == 0 && run.standardOutput == "bytes per frame 4\nswapped\n", "\(run.standardOutput) \(run.standardError)")
    }
}
