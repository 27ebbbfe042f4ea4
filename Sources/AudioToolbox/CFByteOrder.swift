// CoreFoundation's byte-order functions (CFByteOrder.h), which Core Audio code uses to read and
// write big-endian file fields (CAF chunk headers, magic cookies, 'fmt ' four-character codes).
// Same names, argument labels (none) and results as Apple's Swift import.

public typealias CFByteOrder = Int
public let CFByteOrderUnknown: CFByteOrder = 0
public let CFByteOrderLittleEndian: CFByteOrder = 1
public let CFByteOrderBigEndian: CFByteOrder = 2

/// The machine's byte order (little-endian on every platform Swift runs on here).
public func CFByteOrderGetCurrent() -> CFByteOrder {
    UInt16(1).littleEndian == 1 ? CFByteOrderLittleEndian : CFByteOrderBigEndian
}

public func CFSwapInt16(_ arg: UInt16) -> UInt16 { arg.byteSwapped }
public func CFSwapInt32(_ arg: UInt32) -> UInt32 { arg.byteSwapped }
public func CFSwapInt64(_ arg: UInt64) -> UInt64 { arg.byteSwapped }

public func CFSwapInt16BigToHost(_ arg: UInt16) -> UInt16 { UInt16(bigEndian: arg) }
public func CFSwapInt32BigToHost(_ arg: UInt32) -> UInt32 { UInt32(bigEndian: arg) }
public func CFSwapInt64BigToHost(_ arg: UInt64) -> UInt64 { UInt64(bigEndian: arg) }
public func CFSwapInt16HostToBig(_ arg: UInt16) -> UInt16 { arg.bigEndian }
public func CFSwapInt32HostToBig(_ arg: UInt32) -> UInt32 { arg.bigEndian }
public func CFSwapInt64HostToBig(_ arg: UInt64) -> UInt64 { arg.bigEndian }

public func CFSwapInt16LittleToHost(_ arg: UInt16) -> UInt16 { UInt16(littleEndian: arg) }
public func CFSwapInt32LittleToHost(_ arg: UInt32) -> UInt32 { UInt32(littleEndian: arg) }
public func CFSwapInt64LittleToHost(_ arg: UInt64) -> UInt64 { UInt64(littleEndian: arg) }
public func CFSwapInt16HostToLittle(_ arg: UInt16) -> UInt16 { arg.littleEndian }
public func CFSwapInt32HostToLittle(_ arg: UInt32) -> UInt32 { arg.littleEndian }
public func CFSwapInt64HostToLittle(_ arg: UInt64) -> UInt64 { arg.littleEndian }

/// A Float32 or Float64 held in the other byte order (CFSwappedFloat32/64).
public struct CFSwappedFloat32: Sendable, Equatable {
    public var v: UInt32
    public init() { v = 0 }
    public init(v: UInt32) { self.v = v }
}

public struct CFSwappedFloat64: Sendable, Equatable {
    public var v: UInt64
    public init() { v = 0 }
    public init(v: UInt64) { self.v = v }
}

public func CFConvertFloat32HostToSwapped(_ arg: Float32) -> CFSwappedFloat32 { CFSwappedFloat32(v: arg.bitPattern.byteSwapped) }
public func CFConvertFloat32SwappedToHost(_ arg: CFSwappedFloat32) -> Float32 { Float32(bitPattern: arg.v.byteSwapped) }
public func CFConvertFloat64HostToSwapped(_ arg: Float64) -> CFSwappedFloat64 { CFSwappedFloat64(v: arg.bitPattern.byteSwapped) }
public func CFConvertFloat64SwappedToHost(_ arg: CFSwappedFloat64) -> Float64 { Float64(bitPattern: arg.v.byteSwapped) }
public func CFConvertFloatHostToSwapped(_ arg: Float) -> CFSwappedFloat32 { CFConvertFloat32HostToSwapped(arg) }
public func CFConvertFloatSwappedToHost(_ arg: CFSwappedFloat32) -> Float { CFConvertFloat32SwappedToHost(arg) }
public func CFConvertDoubleHostToSwapped(_ arg: Double) -> CFSwappedFloat64 { CFConvertFloat64HostToSwapped(arg) }
public func CFConvertDoubleSwappedToHost(_ arg: CFSwappedFloat64) -> Double { CFConvertFloat64SwappedToHost(arg) }
