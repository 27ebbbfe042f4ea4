/// Why a plugin could not be found, set up or run, in words that name the plugin, what was
/// wrong and what was expected.
public struct PluginError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        /// What the caller asked for does not fit the plugin (an unknown URI or control symbol, a
        /// value out of range, a preset it lacks, more ports than channels): `aqjack` exits 2.
        case usage
        /// The plugin is there but cannot be hosted (a missing bundle or binary, a feature this
        /// host lacks, instantiation refused): `aqjack` exits 1.
        case runtime
    }
    public let kind: Kind
    public let message: String
    public var description: String { message }

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}
