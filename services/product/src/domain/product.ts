import { AppError } from '@licensing/runtime';
import { PRODUCT_DESCRIPTION_MAX_LENGTH, PRODUCT_NAME_MAX_LENGTH } from '@licensing/proto';

export function checkProductInput(input: { name: string; description: string }): { name: string; description: string } {
  const name = input.name.trim();
  if (!name) throw AppError.invalid('name', 'name is required');
  if (name.length > PRODUCT_NAME_MAX_LENGTH)
    throw AppError.invalid('name', `name must be at most ${PRODUCT_NAME_MAX_LENGTH} characters`);
  const description = input.description.trim();
  if (description.length > PRODUCT_DESCRIPTION_MAX_LENGTH)
    throw AppError.invalid('description', `description must be at most ${PRODUCT_DESCRIPTION_MAX_LENGTH} characters`);
  return { name, description };
}
