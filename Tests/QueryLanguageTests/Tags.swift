import Testing

extension Tag {
    /// The fast tier (`Deploy/test.sh --fast`); this target does without TestSupport, which
    /// declares the same tag for the others.
    @Tag static var fast: Self
}
