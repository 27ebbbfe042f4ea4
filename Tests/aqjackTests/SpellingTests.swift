import AQTestSupport
import Foundation
import Testing

/// Type-checks Swift source against the `AudioToolbox` module as an outside package sees it:
/// with the flags SwiftPM gave the Apple-style programs' build (`ApplePrograms`), read from its
/// build plan (the module and include paths, the C module maps), in Swift 5 mode as ported code
/// is compiled.
enum AudioToolboxTypeChecker {
    /// The swiftc path and the flags that find the modules, from the build plan's compile
    /// command of `Porter`.
    static func flags() throws -> (swiftc: String, flags: [String]) {
        let root = #filePath.components(separatedBy: "/Tests/")[0]
        _ = try ApplePrograms.build()
        let plan = try String(contentsOfFile: root + "/.build/apple-programs/.build/debug.yaml", encoding: .utf8)
        guard let line = plan.split(separator: "\n").first(where: { $0.contains("args: [") && $0.contains("\"-module-name\",\"Porter\"") && $0.contains("\"-emit-module\"") }),
              let start = line.firstIndex(of: "["),
              let arguments = try JSONSerialization.jsonObject(with: Data(line[start...].utf8)) as? [String], let swiftc = arguments.first else {
            throw NSError(domain: "SpellingTests", code: 1, userInfo: [NSLocalizedDescriptionKey: "no compile command of Porter in the build plan"])
        }
        var kept: [String] = []
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            if ["-I", "-Xcc", "-module-cache-path", "-target"].contains(argument), index + 1 < arguments.count {
                kept += [argument, arguments[index + 1]]
                index += 2
                continue
            }
            if argument.hasPrefix("-I") { kept.append(argument) }
            index += 1
        }
        return (swiftc, kept)
    }

    /// Type-checks `source` as a file of a module of its own: the compiler's status and output.
    static func check(_ source: String, swiftc: String, flags: [String]) throws -> (status: Int32, output: String) {
        let file = ExternalTool.temporaryPath("spelling", extension: "swift")
        defer { try? FileManager.default.removeItem(atPath: file) }
        try source.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try ExternalTool.run(swiftc, ["-typecheck", "-module-name", "Spelling", "-swift-version", "5"] + flags + [file], timeout: 300)
        return (result.status, result.standardOutput + result.standardError)
    }
}

@Suite("Swift spellings: what Apple's SDK takes compiles, what it rejects does not (issue 36)")
struct SpellingTests {
    @Test("Tests/ApplePrograms/Spellings: MustCompile.swift type-checks against AudioToolbox; each section of MustNotCompile.swift (kMPEG4Object_AAC_LC, MPEG4ObjectID.aac_LC, a tap's client data unwrapped, CF_OPTIONS' C names, an option set as an integer) fails with an error")
    func spellings() throws {
        let root = #filePath.components(separatedBy: "/Tests/")[0] + "/Tests/ApplePrograms/Spellings/"
        let (swiftc, flags) = try AudioToolboxTypeChecker.flags()
        let good = try AudioToolboxTypeChecker.check(try String(contentsOfFile: root + "MustCompile.swift", encoding: .utf8), swiftc: swiftc, flags: flags)
        #expect(good.status == 0, "MustCompile.swift: \(good.output.suffix(3000))")
        let text = try String(contentsOfFile: root + "MustNotCompile.swift", encoding: .utf8)
        let sections = text.components(separatedBy: "// MARK: ").dropFirst()
        #expect(sections.count == 6)
        for section in sections {
            let name = String(section.prefix { $0 != "\n" })
            let bad = try AudioToolboxTypeChecker.check(String(section.drop { $0 != "\n" }), swiftc: swiftc, flags: flags)
            #expect(bad.status != 0 && bad.output.contains("error:"), "compiled, but Apple's SDK rejects it: \(name)")
        }
    }
}
