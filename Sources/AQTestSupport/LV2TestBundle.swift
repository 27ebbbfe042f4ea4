import Foundation

/// Builds the tests' own LV2 plugins: one C file compiled with `cc` into a bundle.
public enum LV2TestBundle {
    /// The end of a one-plugin C file: `cleanup` (frees the handle) and the exported descriptor
    /// of `uri` over the file's `instantiate`, `connect_port`, `run` and `extensionData`.
    public static func descriptor(uri: String, extensionData: String) -> String {
        """

        static void cleanup(LV2_Handle h) { free(h); }

        static const LV2_Descriptor descriptor = {
            "\(uri)", instantiate, connect_port, NULL, run, NULL, cleanup, \(extensionData)
        };

        LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t index) {
            return index == 0 ? &descriptor : NULL;
        }
        """
    }

    /// Writes `NAME.lv2/` (manifest.ttl, NAME.c, NAME.so) in a new temporary folder; returns
    /// that folder, for `LV2_PATH`.
    public static func build(name: String, source: String, manifest: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-lv2-\(getpid())-\(Int.random(in: 0 ..< 1_000_000))").path
        let bundle = folder + "/\(name).lv2"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        try source.write(toFile: bundle + "/\(name).c", atomically: true, encoding: .utf8)
        try manifest.write(toFile: bundle + "/manifest.ttl", atomically: true, encoding: .utf8)
        let compiled = try ExternalTool.run("cc", ["-shared", "-fPIC", "-O2", "-o", bundle + "/\(name).so", bundle + "/\(name).c"])
        guard compiled.status == 0 else {
            throw NSError(domain: "cc", code: Int(compiled.status), userInfo: [NSLocalizedDescriptionKey: "cc could not build \(name).so: \(compiled.standardError)"])
        }
        return folder
    }
}
