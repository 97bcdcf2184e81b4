import { AppError } from '@licensing/runtime';

export const NAME_MAX = 200;
export const DESCRIPTION_MAX = 2000;

export function checkProductInput(input: { name: string; description: string }): { name: string; description: string } {
  const name = input.name.trim();
  if (!name) throw AppError.invalid('name', 'name is required');
  if (name.length > NAME_MAX) throw AppError.invalid('name', `name must be at most ${NAME_MAX} characters`);
  const description = input.description.trim();
  if (description.length > DESCRIPTION_MAX)
    throw AppError.invalid('description', `description must be at most ${DESCRIPTION_MAX} characters`);
  return { name, description };
}
