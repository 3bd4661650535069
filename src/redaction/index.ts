// Redaction: personal data and secrets found in what is logged and replaced before it is stored, by a
// workspace's policy (policy.ts). Pure: no binding, no clock; the log store applies it on every way a
// log, span or OTLP log record comes in (src/logs/redaction.ts), before a row is built, and the policy's
// try-out runs the same code without storing anything.
// Rule: one compiled policy per stored policy; one Redaction per log (its counts are that log's).
export {
  ACTIONS,
  checkPolicy,
  DETECTOR_TYPES,
  FIELD_GROUPS,
  POLICY_LIMITS,
  publicPolicy,
  readStoredPolicy,
  type Action,
  type CustomRule,
  type DetectorRule,
  type DetectorType,
  type FieldGroup,
  type RedactionPolicy,
  type StoredPolicy,
} from "./policy";
export { compilePolicy, placeholderName, Redaction, type CompiledPolicy } from "./redact";
export { redactBlueprint, redactJson, redactLogContent, redactMap, redactRecordContent, redactSpanContent, type LogContent } from "./walk";
export { NATIONAL_ID_FORMATS } from "./national-ids";
