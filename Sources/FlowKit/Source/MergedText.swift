/// Text a YAML merge key (`<<: *x`) brought into a mapping: one merged key and its value,
/// where they are written (under the anchor `&x`), and the `*x` that merged them.
///
/// A problem found in that text while checking the mapping it was merged into is reported
/// at `site`, with a note at the text (see `DiagnosticBag.merges`): the same anchored text
/// may be fine where it is written and wrong where it is merged.
public struct MergedText: Sendable {
    /// The merged key and its value, as written under the anchor.
    public var region: SourceSpan
    /// The `*x` of the `<<: *x` that merged it.
    public var site: SourceSpan

    public init(region: SourceSpan, site: SourceSpan) {
        self.region = region
        self.site = site
    }

    /// Whether `span` lies within the merged text.
    func contains(_ span: SourceSpan) -> Bool {
        region.start <= span.start && span.end <= region.end
    }
}
