import AQMedia
import Foundation

// The few CoreFoundation names that Audio Queue code uses, so it compiles unchanged on Linux
// (swift-corelibs-foundation does not export CoreFoundation's C API). Deviations from Apple are
// listed in docs/PORTING.md.

/// CoreFoundation's `CFString`: Foundation's `NSString`, a class, so `"text" as CFString`,
/// `name as String` and `Unmanaged<CFString>` work as on Apple platforms (Swift bridges `String`
/// and `NSString` with `as` on Linux too).
public typealias CFString = NSString
/// CoreFoundation's `CFURL`: Foundation's `NSURL`, so `url as CFURL` bridges a `URL` as on Apple
/// platforms.
public typealias CFURL = NSURL
/// Seconds, as `CFTimeInterval`.
public typealias CFTimeInterval = Double
/// A CoreFoundation index or length.
public typealias CFIndex = Int

/// `CFAllocator`: memory is Swift's here, so every allocator argument is accepted and ignored.
public final class CFAllocator: Sendable {}
/// `kCFAllocatorDefault` (NULL, as in CoreFoundation).
public let kCFAllocatorDefault: CFAllocator! = nil

/// `CFURLPathStyle`, a CF_ENUM imported as Swift imports Apple's (`.cfurlposixPathStyle`).
public enum CFURLPathStyle: Int, Sendable {
    case cfurlposixPathStyle = 0
    case cfurlhfsPathStyle = 1
    case cfurlWindowsPathStyle = 2
}

extension NSURL {
    /// The file-system path of a file URL, byte escapes kept (``FilePath``); "" for another URL.
    var fileSystemPath: String { path ?? "" }
}

/// `CFURLCreateFromFileSystemRepresentation`: a file URL for `length` bytes of a path.
public func CFURLCreateFromFileSystemRepresentation(_ allocator: CFAllocator!, _ buffer: UnsafePointer<UInt8>,
                                                    _ length: CFIndex, _ isDirectory: Bool) -> CFURL! {
    // Bytes as they are: a name that is not UTF-8 reaches the file system unchanged (FilePath).
    NSURL(fileURLWithPath: FilePath.decode(Array(UnsafeBufferPointer(start: buffer, count: length))), isDirectory: isDirectory)
}

/// `CFURLCreateWithFileSystemPath`: a file URL for a path (only POSIX paths exist here; the
/// style is accepted and ignored).
public func CFURLCreateWithFileSystemPath(_ allocator: CFAllocator!, _ filePath: CFString!, _ pathStyle: CFURLPathStyle,
                                          _ isDirectory: Bool) -> CFURL! {
    NSURL(fileURLWithPath: filePath as String, isDirectory: isDirectory)
}

/// `CFURLCreateWithFileSystemPath` with a Swift `String` (not Apple's; kept for code written
/// against aqjack before CFString became `NSString`).
public func CFURLCreateWithFileSystemPath(_ allocator: CFAllocator!, _ filePath: String, _ pathStyle: CFURLPathStyle,
                                          _ isDirectory: Bool) -> CFURL! {
    NSURL(fileURLWithPath: filePath, isDirectory: isDirectory)
}

/// `kCFURLPOSIXPathStyle`, the C name (Swift code on Apple platforms writes `.cfurlposixPathStyle`).
public let kCFURLPOSIXPathStyle = CFURLPathStyle.cfurlposixPathStyle

/// A run-loop mode name.
public struct CFRunLoopMode: RawRepresentable, Hashable, @unchecked Sendable {
    public let rawValue: CFString
    public init(rawValue: CFString) { self.rawValue = rawValue }
    public static let defaultMode = CFRunLoopMode(rawValue: "kCFRunLoopDefaultMode" as CFString)
    public static let commonModes = CFRunLoopMode(rawValue: "kCFRunLoopCommonModes" as CFString)
}

/// `kCFRunLoopDefaultMode` and `kCFRunLoopCommonModes` are `CFString`s, so that code passing
/// them where Apple's Swift takes a `CFString?` (the run-loop mode of `AudioQueueNewInput` and
/// `AudioQueueNewOutput`, one of the ten ported programs of issue 13) compiles unchanged;
/// `CFRunLoopRunInMode` takes them as well as `CFRunLoopMode.defaultMode`/`.commonModes`.
nonisolated(unsafe) public let kCFRunLoopDefaultMode: CFString! = CFRunLoopMode.defaultMode.rawValue
nonisolated(unsafe) public let kCFRunLoopCommonModes: CFString! = CFRunLoopMode.commonModes.rawValue

/// Why `CFRunLoopRunInMode` returned.
public enum CFRunLoopRunResult: Int32, Sendable {
    case finished = 1, stopped = 2, timedOut = 3, handledSource = 4
}

