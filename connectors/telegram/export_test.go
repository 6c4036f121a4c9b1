package telegram

// ParseUserIDs is parseUserIDs, for the external tests.
var ParseUserIDs = parseUserIDs

// Names the external tests use; the package exports only what cmd/leashd
// (and other packages) need.
const StaleText = staleText
const ExpiredText = expiredText
const InterruptedText = interruptedText
const FeedbackPrompt = feedbackPrompt
const CountedText = countedText
const ApproverOnlyText = approverOnlyText
const AlreadyApprovedText = alreadyApprovedText
const MaxMessage = maxMessage

var DefaultLimits = defaultLimits
var MarkdownToHTML = markdownToHTML
var NewHTTPClient = newHTTPClient
var NotAllowedText = notAllowedText
var SplitHTML = splitHTML
var WebhookPath = webhookPath

type HTTPClient = httpClient

var WithHTTPClient = withHTTPClient
