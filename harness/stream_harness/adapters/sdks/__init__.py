"""The official SDKs as conformance subjects: the client each provider ships (anthropic,
openai, google-genai, mistralai, cohere, boto3 and anthropic's Bedrock client), run on a
replayed body.

Kept apart from the libraries because an SDK is the provider's own reading of its wire
format: where an SDK and the contract disagree, the finding is about the SDK or the
provider's docs, not about a translation layer. This package module holds nothing, so
importing one adapter loads only what that adapter needs.
"""
