import CJack
import Glibc

/// Naming of JACK servers, and quieting libjack's own console messages.
public enum JackServer {
    /// The server a client connects to when given `explicitName`: that name, else
    /// `$JACK_DEFAULT_SERVER`, else `default` (libjack's rule).
    /// The longest server name aqjack hands to libjack, bytes. libjack builds paths and buffers
    /// from it and aborts ("stack smashing detected") on names of about 265 bytes; real names
    /// are short, so the limit is JACK's client name size.
    public static let maximumNameBytes = 64

    /// The longest client name libjack takes, bytes (`jack_client_name_size()` less its NUL).
    public static var maximumClientNameBytes: Int { Int(jack_client_name_size()) - 1 }

    /// Refuses a server or client name libjack cannot take, before any libjack call.
    public static func checkNames(server: String, client: String) throws(JackError) {
        guard !server.isEmpty, server.utf8.count <= maximumNameBytes else {
            throw .invalidName(what: "server", name: server, limit: maximumNameBytes)
        }
        guard !client.isEmpty, client.utf8.count <= maximumClientNameBytes else {
            throw .invalidName(what: "client", name: client, limit: maximumClientNameBytes)
        }
    }

    public static func resolvedName(_ explicitName: String?) -> String {
        if let explicitName, !explicitName.isEmpty { return explicitName }
        if let fromEnvironment = getenv("JACK_DEFAULT_SERVER"), fromEnvironment.pointee != 0 {
            return String(cString: fromEnvironment)
        }
        return "default"
    }

    /// Routes libjack's error and info messages ("Cannot connect to server socket ...") away from
    /// stderr, unless `AQJACK_JACK_LOG` is set; aqjack reports failures in its own words.
    public static func quietLibraryMessages() {
        guard getenv("AQJACK_JACK_LOG") == nil else { return }
        jack_set_error_function(silentJackMessage)
        jack_set_info_function(silentJackMessage)
    }

    /// libjack's version, e.g. `1.9.21`.
    public static var libraryVersion: String {
        String(cString: jack_get_version_string())
    }
}

private let silentJackMessage: @convention(c) (UnsafePointer<CChar>?) -> Void = { _ in }
