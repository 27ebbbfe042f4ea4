import AudioQueue
import Testing

/// The one gap-filling decision (recording queue's compressed streams, `aqjack record`'s files).
@Suite("Timeline aligner (no server needed)")
struct TimelineAlignerTests {
    typealias Placement = TimelineAligner.Placement

    @Test("contiguous runs place as they are; a gap asks for exactly its silence; a repeat drops exactly what is already placed")
    func gapsAndRepeats() {
        var timeline = TimelineAligner(longestFilledGap: 1000)
        #expect(timeline.place(position: 5000, count: 128) == Placement())
        #expect(timeline.place(position: 5128, count: 128) == Placement())
        #expect(timeline.place(position: 5384, count: 128) == Placement(silence: 128))          // one lost cycle
        #expect(timeline.place(position: 5384, count: 128) == Placement(skip: 128))             // the cycle repeated
        #expect(timeline.place(position: 5448, count: 128) == Placement(skip: 64))              // half of it already placed
        #expect(timeline.next == 5576)
        // JACK labels one cycle a cycle ahead, then repeats that label (the CI run with 3 xruns):
        // a gap and a repeat, as the frames' times say.
        #expect(timeline.place(position: 5704, count: 128) == Placement(silence: 128))
        #expect(timeline.place(position: 5704, count: 128) == Placement(skip: 128))
    }

    @Test("a gap or overlap longer than the limit, or a run marked rebasing, starts the timeline afresh; reset forgets it")
    func rebase() {
        var timeline = TimelineAligner(longestFilledGap: 1000)
        _ = timeline.place(position: 0, count: 100)
        #expect(timeline.place(position: 1101, count: 100) == Placement(rebase: true))
        #expect(timeline.next == 1201)
        #expect(timeline.place(position: 100, count: 100) == Placement(rebase: true))
        #expect(timeline.next == 200)
        #expect(timeline.place(position: 250, count: 10, rebasing: true) == Placement(rebase: true))
        timeline.reset()
        #expect(timeline.place(position: 7, count: 1) == Placement())
        var unlimited = TimelineAligner()
        _ = unlimited.place(position: 0, count: 1)
        #expect(unlimited.place(position: 1 << 40, count: 1) == Placement(silence: (1 << 40) - 1))
    }
}
