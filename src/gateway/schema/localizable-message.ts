/**
 * The vAPI localizable message (spec 2.5). A param's value may hold a nested message (`l`) whose
 * params hold values again, to any depth: the types refer to each other, and the client's
 * selection decides how deep it reads.
 */
import type {
  LocalizableMessage,
  MessageParam,
  MessageParamValue,
  NestedMessage,
} from '../../upstream/content-library/schemas.js';
import { builder } from './builder.js';
import { upstreamDateTime, upstreamInt32, upstreamSafeInt } from './update-sessions/values.js';

const NestedLocalizableMessageRef = builder.objectRef<NestedMessage>('NestedLocalizableMessage');
const LocalizableMessageParamRef = builder.objectRef<MessageParam>('LocalizableMessageParam');
const LocalizableMessageParamValueRef = builder.objectRef<MessageParamValue>('LocalizableMessageParamValue');
export const LocalizableMessageRef = builder.objectRef<LocalizableMessage>('LocalizableMessage');

LocalizableMessageRef.implement({
  description: 'A message with an id for translation, its English text and the values it refers to.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Stable identifier of the message, for translation.' }),
    defaultMessage: t.exposeString('default_message', { description: 'The message in English.' }),
    localized: t.exposeString('localized', {
      nullable: true,
      description: 'The message in the requested language, when the server provides it.',
    }),
    args: t.exposeStringList('args', { description: 'Positional arguments of the message.' }),
    params: t.expose('params', { type: [LocalizableMessageParamRef], description: 'Named arguments of the message.' }),
  }),
});

NestedLocalizableMessageRef.implement({
  description: 'A message used as a parameter value of another message.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Stable identifier of the message, for translation.' }),
    params: t.expose('params', { type: [LocalizableMessageParamRef], description: 'Named arguments of the message.' }),
  }),
});

LocalizableMessageParamRef.implement({
  description: 'One named argument of a message.',
  fields: (t) => ({
    key: t.exposeString('key', { description: 'The name the message text refers to.' }),
    value: t.expose('value', { type: LocalizableMessageParamValueRef, description: 'The value of the argument.' }),
  }),
});

LocalizableMessageParamValueRef.implement({
  description: 'The value of a message argument; the member that is set gives its kind.',
  fields: (t) => ({
    dt: t.field({ type: 'DateTime', nullable: true, description: 'A date-time value.', resolve: (v) => upstreamDateTime(v.dt) }),
    s: t.exposeString('s', { nullable: true, description: 'A string value.' }),
    d: t.exposeFloat('d', { nullable: true, description: 'A decimal value.' }),
    precision: t.int({
      nullable: true,
      description: 'Digits after the decimal point when `d` is shown.',
      resolve: (v) => upstreamInt32(v.precision),
    }),
    format: t.exposeString('format', { nullable: true, description: 'How to show the value, e.g. SHORT_DATE.' }),
    i: t.field({ type: 'SafeInt', nullable: true, description: 'An integer value.', resolve: (v) => upstreamSafeInt(v.i) }),
    l: t.expose('l', { type: NestedLocalizableMessageRef, nullable: true, description: 'A nested message.' }),
  }),
});
