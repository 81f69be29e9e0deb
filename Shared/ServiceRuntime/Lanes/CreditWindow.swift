/// One direction's flow control on a lane, the same for a call's answer and a socket's frames:
/// the sender has at most ``size`` bytes in flight (a larger frame goes alone, when nothing
/// is), and the receiver gives credit back as it reads. A value kept under its owner's lock.
struct CreditWindow: Sendable, Equatable {
    /// Bytes one direction may have in flight.
    static let size = 256 << 10

    /// What the sender may still send.
    private(set) var available = CreditWindow.size

    /// Whether `cost` may go now: when the window has room for it, or for a frame larger than
    /// the window, when nothing is in flight.
    func admits(_ cost: Int) -> Bool { available >= cost || available == Self.size }

    /// Takes `cost` from the window when it ``admits(_:)`` it: whether it was taken.
    mutating func take(_ cost: Int) -> Bool {
        guard admits(cost) else { return false }
        available -= cost
        return true
    }

    /// The receiver gave `bytes` back. More than was in flight (a confused peer) fills the
    /// window and no further.
    mutating func credit(_ bytes: Int) {
        available = min(Self.size, available + max(0, bytes))
    }
}

/// The receiving side of a ``CreditWindow``: what arrived and has not been credited back, and
/// what was read and is waiting to be. Read bytes go back once ``batch`` of them gather, so a
/// reader of many small frames does not answer each with a credit of its own.
struct CreditAccount: Sendable, Equatable {
    /// How many read bytes gather before they are credited back (1: at once).
    let batch: Int
    /// Bytes that arrived and have not been credited back (the sender counts them in flight).
    private(set) var inFlight = 0
    private var read = 0

    init(batch: Int) {
        self.batch = batch
    }

    /// `cost` arrived: false when it overran the window (more in flight than the sender may
    /// have, unless it is one larger frame alone).
    mutating func arrived(_ cost: Int) -> Bool {
        let alone = inFlight == 0
        inFlight += cost
        return inFlight <= CreditWindow.size || alone
    }

    /// `cost` was read: the credit to give back now, if enough has gathered.
    mutating func consumed(_ cost: Int) -> Int? {
        read += cost
        guard read >= batch, read > 0 else { return nil }
        defer { read = 0 }
        inFlight = max(0, inFlight - read)
        return read
    }
}
