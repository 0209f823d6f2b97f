import FlowKit

/// What the journal stores about a run before it starts.
public struct RunMetadata: Sendable {
    /// How the run came to be.
    public enum Kind: String, Sendable {
        case run
        case resume
        case undo
    }

    public var id: String
    public var kind: Kind
    public var parentID: String?
    public var workflowPath: String
    public var content: [UInt8]
    public var args: RunArguments
    public var cwd: String
    /// The bytes of `workflowPath` and of `cwd` when they are not UTF-8 (then the strings are
    /// only how they are shown); nil when they are.
    public var workflowPathBytes: [UInt8]?
    public var cwdBytes: [UInt8]?

    public init(id: String, kind: Kind, parentID: String?, workflowPath: String, content: [UInt8], args: RunArguments, cwd: String,
                workflowPathBytes: [UInt8]? = nil, cwdBytes: [UInt8]? = nil) {
        self.id = id
        self.kind = kind
        self.parentID = parentID
        self.workflowPath = workflowPath
        self.content = content
        self.args = args
        self.cwd = cwd
        self.workflowPathBytes = workflowPathBytes
        self.cwdBytes = cwdBytes
    }
}
