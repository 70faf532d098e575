// The message catalog (zod) and codec.
export {
  MAX_ITEMS_PER_MESSAGE,
  MAX_MESSAGE_BYTES,
  MESSAGE_VERSION,
  OUTPUT_TAIL_MAX_BYTES,
  SUPPORTED_MESSAGE_VERSIONS,
} from './envelope.js';
export { acceptResultItem } from './fast-accept.js';
export { dispatchItemSchema, dispatchMessageSchema, idempotencyKeyOf } from './dispatch.js';
export type { DispatchItem, DispatchMessage } from './dispatch.js';
export {
  OUTPUT_IN_RESULT_MAX_BYTES,
  OUTPUT_IN_RESULT_MAX_CHUNKS,
  REFUSAL_DETAIL_MAX_LENGTH,
  REFUSAL_REASONS,
  RESULT_ERROR_MAX_LENGTH,
  RESULT_OUTCOMES,
  ackItemSchema,
  ackMessageSchema,
  refusalItemSchema,
  refusalMessageSchema,
  resultItemSchema,
  resultMessageSchema,
  resultOutputSchema,
} from './worker-replies.js';
export type {
  AckItem,
  AckMessage,
  RefusalItem,
  RefusalMessage,
  RefusalReason,
  ResultItem,
  ResultMessage,
  ResultOutcome,
  ResultOutput,
} from './worker-replies.js';
export { cancelMessageSchema, heartbeatMessageSchema, RECALL_REASON } from './control.js';
export {
  DEFAULT_LOG_MAX_BYTES,
  LOG_CHUNK_MAX_BYTES,
  LOG_STREAMS,
  LOG_TAIL_KEPT_BYTES,
  logChunkItemSchema,
  logEndItemSchema,
  logItemSchema,
  logMessageSchema,
} from './log.js';
export type { LogChunkItem, LogEndItem, LogItem, LogMessage, LogStream } from './log.js';
export type { CancelMessage, HeartbeatMessage } from './control.js';
export { MESSAGE_KINDS, MESSAGE_SCHEMAS, encodeMessage, encodeTrustedMessage, messageSchema, parseMessage } from './codec.js';
export type { Message, MessageKind, MessageOf, ParsedMessage } from './codec.js';
export { ITEMWISE_KINDS, parseMessageByItem } from './by-item.js';
export type { ItemwiseKind, ItemwiseMessage, ParsedByItem, RefusedItem, RefusedItemCause } from './by-item.js';
