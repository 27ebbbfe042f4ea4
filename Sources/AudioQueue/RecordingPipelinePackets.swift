import AQCodecs
import AQCore
import CAudioTypes

/// The recording pipeline's packet path (compressed formats): frames encoded by the packet
/// stage, each packet placed into the first enqueued buffer with its packet description and
/// the buffer's start time, buffers delivered when full or holding half a second of audio.
/// Queue thread, under the pipeline's lock.
extension RecordingPipeline {
    /// Compressed: encodes frames and places the packets.
    func encodeLocked(_ frames: UnsafePointer<Float>, frameCount: Int, record: CaptureCycle, stage: InputPacketStage) {
        if stage.anchorDeviceFrame == nil {
            // The anchor is where the frames arrived (packet stamps subtract the compensation).
            let start = timestamp(ofOutputFrame: 0, record: record).mSampleTime
            stage.anchorDeviceFrame = start + Double(latencyCompensationFrames)
            if firstRecordedFrame == nil { firstRecordedFrame = start }
        }
        if meteringEnabled {
            meterLocked(frames, frameCount: frameCount)
            meteredFrames += frameCount
        }
        do {
            try stage.encode(frames, frameCount: frameCount) { packet, index in placePacketLocked(packet, index: index, record: record) }
        } catch {
            encoderFailures.add(1, ordering: .relaxed)
        }
    }

    /// The largest packet a buffer receives (linear PCM: one frame).
    var maximumPacketSize: Int { packetStage?.maximumPacketSize ?? layout.bytesPerFrame }

    /// Puts one packet into `enqueued[0]`, delivering buffers that cannot take it.
    private func placePacketLocked(_ packet: EncodedPacket, index: Int64, record: CaptureCycle?) {
        let size = packet.bytes.count
        while let buffer = enqueued.first {
            let fits = filledBytes + size <= Int(buffer.pointee.mAudioDataBytesCapacity)
                && filledPackets < Int(buffer.pointee.mPacketDescriptionCapacity)
            if !fits {
                if filledPackets == 0 { break }   // cannot happen: enqueue checks the capacity
                deliverPartialBufferLocked()
                continue
            }
            isInUnderrun = false
            if filledPackets == 0, let stage = packetStage {
                let frame = stage.deviceFrame(ofPacket: index)
                if let timing = record ?? lastRecord {
                    fillStart = timestamp(ofDeviceFrame: frame, in: timing)
                } else {
                    fillStart = AudioTimeStamp()
                    fillStart.mSampleTime = frame - Double(latencyCompensationFrames)
                    fillStart.mFlags = .sampleTimeValid
                }
            }
            packet.bytes.withUnsafeBytes { (buffer.pointee.mAudioData + filledBytes).copyMemory(from: $0.baseAddress!, byteCount: size) }
            buffer.pointee.mPacketDescriptions?[filledPackets] = AudioStreamPacketDescription(mStartOffset: Int64(filledBytes),
                                                                                                mVariableFramesInPacket: 0, mDataByteSize: UInt32(size))
            filledPackets += 1
            filledBytes += size
            // Delivered by time as well as by fill, as Apple's queue does: a buffer holding half
            // a second of audio goes to the callback even when small packets (silence, quiet
            // input) leave it mostly empty, so a recording's file is never more than that behind.
            if filledBytes + maximumPacketSize > Int(buffer.pointee.mAudioDataBytesCapacity)
                || filledPackets == Int(buffer.pointee.mPacketDescriptionCapacity)
                || filledPackets >= packetsPerDelivery {
                deliverPartialBufferLocked()
            }
            return
        }
        // kAudioQueueErr_RecordUnderrun: no buffer for this packet; lost and counted.
        underrunFrames.add(packet.frameCount, ordering: .relaxed)
        if !isInUnderrun { discontinuities.add(1, ordering: .relaxed) }
        isInUnderrun = true
    }

    /// The most packets a compressed buffer holds before it is delivered: half a second of
    /// audio (AAC 1024 frames per packet: 23 packets at 48 kHz; ALAC 4096: 5), at least one.
    private var packetsPerDelivery: Int {
        guard let packetStage else { return .max }
        return max(1, packetStage.sampleRate / 2 / packetStage.framesPerPacket)
    }

    /// Compressed: flushes the encoder at a stop, placing its last packets. Takes the lock.
    func finishEncoding() {
        lock.lock()
        defer { lock.unlock() }
        guard let packetStage, packetStage.hasStarted else { return }
        do {
            try packetStage.finish { packet, index in placePacketLocked(packet, index: index, record: lastRecord) }
        } catch {
            encoderFailures.add(1, ordering: .relaxed)
        }
    }
}
